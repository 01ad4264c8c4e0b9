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
// them). The checkpoint is fetched first, so the chain exported after it
// reaches it, and comes first, so verify can stream the receipts after it.
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
	w := bufio.NewWriter(env.Stdout)
	w.WriteString("{\n")
	if status, text, err := c.text("/.well-known/rowcall-checkpoint"); err != nil {
		return err
	} else if status == 200 {
		cp, _ := json.Marshal(text)
		fmt.Fprintf(w, "  \"checkpoint\": %s,\n", cp)
	}
	// Each page is written as it arrives: memory stays one page, whatever
	// the chain's length.
	w.WriteString(`  "receipts": [`)
	n := 0
	for after := int64(0); ; {
		status, raw, err := c.text(fmt.Sprintf("/api/receipts?after=%d&limit=1000", after))
		if err != nil {
			return err
		}
		var page struct {
			Receipts  []json.RawMessage `json:"receipts"`
			NextAfter *int64            `json:"next_after"`
		}
		if err := json.Unmarshal([]byte(raw), &page); err != nil || status != 200 {
			return fmt.Errorf("HTTP %d: %s", status, raw)
		}
		for _, r := range page.Receipts {
			if n++; n > 1 {
				w.WriteByte(',')
			}
			w.WriteString("\n    ")
			var b bytes.Buffer
			json.Indent(&b, r, "    ", "  ")
			w.Write(b.Bytes())
		}
		if page.NextAfter == nil {
			break
		}
		after = *page.NextAfter
	}
	if n > 0 {
		w.WriteString("\n  ")
	}
	w.WriteString("]\n}\n")
	return w.Flush()
}
