package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
)

// CallCommand is `rowcall call KEY ['a|b']`: it prints the result, and the
// receipt link on stderr, and exits 1 when the result is an ERR.
type CallCommand struct {
	client
	shape bool
}

func (c *CallCommand) Usage() (string, string) {
	return "KEY ['ARG1|ARG2']", "invoke a row on a running host and print its result (the receipt link on stderr)"
}

func (c *CallCommand) Flags(fs *flag.FlagSet) {
	c.client.flags(fs)
	fs.BoolVar(&c.shape, "shape", false, "show the request that would be sent; send nothing upstream and run nothing (a receipt records the preview)")
}

func (c *CallCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return usageError("call", c)
	}
	c.connect(ctx, env)
	body := ""
	if len(args) == 2 {
		body = args[1]
	}
	status, out, err := c.do("POST", "/api/dispatch", map[string]any{"key": args[0], "body": body, "shape": c.shape})
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("HTTP %d\n%s", status, indented(out))
	}
	if c.shape {
		fmt.Fprintln(env.Stdout, indented(out["shape"]))
	}
	fmt.Fprintln(env.Stdout, out["result"])
	if p, ok := out["proof"].(map[string]any); ok {
		fmt.Fprintf(env.Stderr, "receipt %v: %v\n", p["invocation_id"], p["public_receipt"])
	}
	if out["ok"] != true {
		return exitCode(1)
	}
	return nil
}
