package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
)

// ImportMCPCommand is `rowcall import mcp URL|stdio:NAME`: one http row
// (runner mcp) per tool of an MCP server, through POST /api/import/mcp, so
// the host lists the tools with the credential from its own environment and
// its outbound policy (a stdio NAME is one its ROWCALL_MCP_SERVERS file
// declares). A dry run first, then the writes, each guarded by the version it
// was compared with; then created, updated, unchanged. A server that needs a
// person's sign-in prints the link to open, after which the import is run
// again.
type ImportMCPCommand struct {
	client
	prefix, category, auth string
	dry, replace           bool
}

func (c *ImportMCPCommand) Usage() (string, string) {
	return "URL|stdio:NAME", "one row per tool of an MCP server (runner mcp): created, updated or unchanged"
}

func (c *ImportMCPCommand) Flags(fs *flag.FlagSet) {
	c.client.flags(fs)
	fs.StringVar(&c.prefix, "prefix", "", "put before every key, e.g. GH_")
	fs.StringVar(&c.category, "category", "", "every row's category")
	fs.StringVar(&c.auth, "auth", "", "every row's auth spec, used to list the tools too, e.g. bearer:GITHUB_TOKEN")
	fs.BoolVar(&c.dry, "dry-run", false, "report what would change; change nothing")
	fs.BoolVar(&c.replace, "replace", false, "replace rows of the same keys that this server's import did not make")
}

func (c *ImportMCPCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: rowcall import mcp URL|stdio:NAME [--prefix P] [--category C] [--auth bearer:VAR] [--dry-run] [--replace] [--url URL]")
	}
	q := url.Values{"server": {args[0]}, "prefix": {c.prefix}, "category": {c.category}, "auth": {c.auth}}
	if c.replace {
		q.Set("replace", "1")
	}
	c.connect(ctx, env)
	var sum report
	var skipped []string
	err := dryRunFirst(env, &sum, c.dry, func(dryRun bool) error {
		path := "/api/import/mcp?" + q.Encode()
		if dryRun {
			path += "&dry_run=1"
		}
		status, out, err := c.do("POST", path, map[string]any{})
		if err != nil {
			return err
		}
		b, _ := json.Marshal(out)
		sum = report{}
		json.Unmarshal(b, &sum)
		var extra struct {
			Skipped []string `json:"skipped"`
		}
		json.Unmarshal(b, &extra)
		skipped = extra.Skipped
		if link, _ := out["connect_url"].(string); link != "" { // connection_required: the server needs a person's sign-in
			return fmt.Errorf("%s needs a person's sign-in (%v): open\n  %s\nin a browser and sign in, then run this import again; its rows will call the server with %v", args[0], out["error"], link, out["auth"])
		}
		if status != 200 && len(sum.Invalid) == 0 {
			return fmt.Errorf("HTTP %d: %s", status, b)
		}
		return nil
	})
	for _, s := range skipped {
		fmt.Fprintln(env.Stderr, "skipped", s)
	}
	if err == nil && c.dry { // the rows it would make, by key: what to check before making them
		for _, k := range sum.Created {
			fmt.Fprintf(env.Stdout, "  create %s\n", k)
		}
	}
	return err
}
