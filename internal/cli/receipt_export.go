package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
)

// ReceiptExportCommand is `rowcall receipt export`: the whole chain as one
// JSON document on stdout, {"checkpoint":…,"receipts":[…]}, written page by
// page as it is read (archived segments included: the host reads across
// them), so it holds one page of the chain at a time. The checkpoint is
// fetched first, so the chain exported after it reaches it, and comes first,
// so verify can stream the receipts after it.
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
	// The document is written page by page as the pages arrive, in the bytes
	// printJSON writes for the whole document: keys sorted, two-space indent.
	out := bufio.NewWriter(env.Stdout)
	out.WriteString("{\n")
	if status, text, err := c.text("/.well-known/rowcall-checkpoint"); err != nil {
		return err
	} else if status == 200 {
		b, _ := json.Marshal(text)
		fmt.Fprintf(out, "  \"checkpoint\": %s,\n", b)
	}
	out.WriteString(`  "receipts": [`)
	var one bytes.Buffer
	enc := json.NewEncoder(&one)
	enc.SetIndent("    ", "  ")
	n := 0
	after := int64(0)
	for {
		status, page, err := c.do("GET", fmt.Sprintf("/api/receipts?after=%d&limit=1000", after), nil)
		if err != nil {
			return err
		}
		if status != 200 {
			return fmt.Errorf("HTTP %d: %v", status, page)
		}
		list, _ := page["receipts"].([]any)
		for _, r := range list {
			if n > 0 {
				out.WriteByte(',')
			}
			n++
			out.WriteString("\n    ")
			one.Reset()
			if err := enc.Encode(r); err != nil {
				return err
			}
			out.Write(bytes.TrimSuffix(one.Bytes(), []byte("\n")))
		}
		next, ok := page["next_after"].(float64)
		if !ok {
			break
		}
		after = int64(next)
	}
	if n > 0 {
		out.WriteString("\n  ")
	}
	out.WriteString("]\n}\n")
	return out.Flush()
}
