package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
)

// ReceiptCommand is `rowcall receipt inv_…`: one receipt from a running
// host, and whether it is confirmed.
type ReceiptCommand struct{ client }

func (c *ReceiptCommand) Usage() (string, string) {
	return "INVOCATION_ID", "show a receipt from a running host"
}

func (c *ReceiptCommand) Flags(fs *flag.FlagSet) { c.client.flags(fs) }

func (c *ReceiptCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return usageError("receipt", c)
	}
	c.connect(ctx, env)
	status, out, err := c.do("GET", "/api/dispatch?confirm="+url.QueryEscape(args[0]), nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, indented(out))
	if status != http.StatusOK {
		return fmt.Errorf("no receipt %s", args[0])
	}
	return nil
}
