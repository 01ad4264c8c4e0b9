package cli

import (
	"context"
	"flag"
	"fmt"
)

// ReceiptExportCommand is `rowcall receipt export`: the whole chain as one
// JSON document on stdout, {"checkpoint":…,"receipts":[…]}. The checkpoint
// is fetched first, so the chain exported after it reaches it.
type ReceiptExportCommand struct{ client }

func (c *ReceiptExportCommand) Usage() (string, string) {
	return "> chain.json", "save the signed receipt chain of a running host, with its checkpoint, for receipt verify"
}

func (c *ReceiptExportCommand) Flags(fs *flag.FlagSet) { c.client.flags(fs) }

func (c *ReceiptExportCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 0 {
		return usageError("receipt export", c)
	}
	c.connect(ctx, env)
	doc := map[string]any{}
	if status, text, err := c.text("/.well-known/rowcall-checkpoint"); err != nil {
		return err
	} else if status == 200 {
		doc["checkpoint"] = text
	}
	all := []any{}
	after := int64(0)
	for {
		status, out, err := c.do("GET", fmt.Sprintf("/api/receipts?after=%d&limit=1000", after), nil)
		if err != nil {
			return err
		}
		if status != 200 {
			return fmt.Errorf("HTTP %d: %v", status, out)
		}
		list, _ := out["receipts"].([]any)
		all = append(all, list...)
		next, ok := out["next_after"].(float64)
		if !ok {
			break
		}
		after = int64(next)
	}
	doc["receipts"] = all
	return printJSON(env.Stdout, doc)
}
