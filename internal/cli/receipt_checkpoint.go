package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// ReceiptCheckpointCommand is `rowcall receipt checkpoint`: the host's signed
// chain head, to save and give to `rowcall receipt verify --checkpoint` later.
type ReceiptCheckpointCommand struct{ client }

func (c *ReceiptCheckpointCommand) Usage() (string, string) {
	return "> checkpoint.txt", "save the signed head of a running host's receipt chain, for receipt verify --checkpoint"
}

func (c *ReceiptCheckpointCommand) Flags(fs *flag.FlagSet) { c.client.flags(fs) }

func (c *ReceiptCheckpointCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 0 {
		return usageError("receipt checkpoint", c)
	}
	c.connect(ctx, env)
	status, text, err := c.text("/.well-known/rowcall-checkpoint")
	if err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("HTTP %d: %s", status, text)
	}
	_, err = io.WriteString(env.Stdout, text)
	return err
}
