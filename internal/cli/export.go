package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// ExportCommand is `rowcall export`: every row (disabled and hidden ones
// too) as one JSON document on stdout, the file `rowcall import` reads.
type ExportCommand struct{ client }

func (c *ExportCommand) Usage() (string, string) {
	return "> registry.json", "save a running host's whole registry as one JSON file, for import"
}

func (c *ExportCommand) Flags(fs *flag.FlagSet) { c.client.flags(fs) }

func (c *ExportCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 0 {
		return usageError("export", c)
	}
	c.connect(ctx, env)
	res, err := c.raw("GET", "/api/dispatch?registry=1&all=1", nil)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		return fmt.Errorf("HTTP %d: %s", res.StatusCode, b)
	}
	_, err = io.Copy(env.Stdout, res.Body)
	return err
}
