package cli

import (
	"context"
	"flag"
	"fmt"
)

// ReceiptKeysCommand is `rowcall receipt keys`: the host's public keys, to
// keep beside an export for offline verification.
type ReceiptKeysCommand struct{ client }

func (c *ReceiptKeysCommand) Usage() (string, string) {
	return "> keys.json", "save the public keys a running host signs receipts with"
}

func (c *ReceiptKeysCommand) Flags(fs *flag.FlagSet) { c.client.flags(fs) }

func (c *ReceiptKeysCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 0 {
		return usageError("receipt keys", c)
	}
	c.connect(ctx, env)
	status, out, err := c.do("GET", "/.well-known/rowcall-receipt-keys", nil)
	if err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("HTTP %d: %v", status, out)
	}
	return printJSON(env.Stdout, out)
}
