package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
)

// ReceiptVerifyCommand is `rowcall receipt verify FILE --keys KEYS
// [--checkpoint CP]`: offline, with no access to the server, it checks one
// receipt (its hash and signature) or a whole exported chain (and every link),
// naming the first bad one; then the chain against the checkpoint its export
// carries and against a checkpoint saved earlier (CP: the text of
// /.well-known/rowcall-checkpoint or an earlier export), which catches a chain
// cut short or rewritten since.
type ReceiptVerifyCommand struct {
	keys, checkpoint string
}

func (c *ReceiptVerifyCommand) Usage() (string, string) {
	return "FILE", "check receipts offline (FILE: one receipt, or a chain from receipt export; - for stdin), against a saved checkpoint too"
}

func (c *ReceiptVerifyCommand) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.keys, "keys", "", "the host's public keys, saved by rowcall receipt keys (required)")
	fs.StringVar(&c.checkpoint, "checkpoint", "", "a checkpoint saved earlier by rowcall receipt checkpoint, or an earlier export")
}

func (c *ReceiptVerifyCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 || c.keys == "" {
		return fmt.Errorf("usage: rowcall receipt verify FILE --keys KEYS.json [--checkpoint CHECKPOINT]   (FILE: one receipt, or a chain from `rowcall receipt export`; - for stdin; CHECKPOINT: saved from `rowcall receipt checkpoint` or an earlier export)")
	}
	w := env.Stdout
	var pub struct {
		Keys []ledger.PublicKey `json:"keys"`
	}
	if err := readJSON(env, c.keys, &pub); err != nil {
		return err
	}
	keys, err := ledger.ParseKeys(pub.Keys)
	if err != nil {
		return err
	}
	chain, own, err := readReceipts(env, args[0])
	if err != nil {
		return err
	}
	type checkpoint struct{ from, text string }
	var checkpoints []checkpoint
	if own != "" {
		checkpoints = append(checkpoints, checkpoint{"the export's own checkpoint", own})
	}
	if file := c.checkpoint; file != "" {
		text, err := readCheckpoint(env, file)
		if err != nil {
			return err
		}
		checkpoints = append(checkpoints, checkpoint{"checkpoint " + file, text})
	}
	if len(chain) == 1 && len(checkpoints) == 0 {
		if err := keys.Check(&chain[0]); err != nil {
			return fmt.Errorf("FAILED: %w", err)
		}
		fmt.Fprintf(w, "OK: receipt %s (seq %d) is intact and signed by key %s\n", chain[0].ID, chain[0].Seq, chain[0].KeyID)
		return nil
	}
	if err := keys.Verify(chain); err != nil {
		return fmt.Errorf("FAILED: %w", err)
	}
	var agreed []string
	for _, c := range checkpoints {
		cp, err := keys.OpenCheckpoint([]byte(c.text))
		if err == nil {
			err = cp.Match(chain)
		}
		if err != nil {
			return fmt.Errorf("FAILED: %s: %w", c.from, err)
		}
		agreed = append(agreed, fmt.Sprintf("OK: the chain agrees with %s (%s, seq %d)", c.from, cp.Origin, cp.Size))
	}
	if len(chain) == 0 {
		fmt.Fprintln(w, "OK: 0 receipts")
	} else {
		fmt.Fprintf(w, "OK: %d receipts, seq %d to %d, every one intact, signed and linked to the one before\n", len(chain), chain[0].Seq, chain[len(chain)-1].Seq)
	}
	for _, line := range agreed {
		fmt.Fprintln(w, line)
	}
	return nil
}

// readReceipts accepts one receipt, a confirm answer {"receipt":…}, an export
// {"receipts":[…],"checkpoint":…} or a plain array; checkpoint is the
// export's signed checkpoint, if it has one.
func readReceipts(env *Env, file string) (chain []rowcall.Receipt, checkpoint string, err error) {
	var raw json.RawMessage
	if err := readJSON(env, file, &raw); err != nil {
		return nil, "", err
	}
	var list []rowcall.Receipt
	if json.Unmarshal(raw, &list) == nil {
		return list, "", nil
	}
	var wrapped struct {
		Receipts   []rowcall.Receipt `json:"receipts"`
		Receipt    *rowcall.Receipt  `json:"receipt"`
		Checkpoint string            `json:"checkpoint"`
	}
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return nil, "", fmt.Errorf("%s is not receipts JSON: %w", file, err)
	}
	if wrapped.Receipt != nil {
		return []rowcall.Receipt{*wrapped.Receipt}, "", nil
	}
	if wrapped.Receipts != nil {
		return wrapped.Receipts, wrapped.Checkpoint, nil
	}
	var one rowcall.Receipt
	json.Unmarshal(raw, &one)
	if one.ID == "" {
		return nil, "", fmt.Errorf("%s holds no receipt", file)
	}
	return []rowcall.Receipt{one}, "", nil
}

// readCheckpoint reads a saved checkpoint: its signed-note text, or an
// export whose "checkpoint" it takes.
func readCheckpoint(env *Env, file string) (string, error) {
	r, err := openInput(env, file)
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return string(b), nil
	}
	var export struct {
		Checkpoint string `json:"checkpoint"`
	}
	if err := json.Unmarshal(b, &export); err != nil || export.Checkpoint == "" {
		return "", fmt.Errorf("%s holds no checkpoint: save one with `rowcall receipt checkpoint` (/.well-known/rowcall-checkpoint) or give an export that has one", file)
	}
	return export.Checkpoint, nil
}

func readJSON(env *Env, file string, v any) error {
	r, err := openInput(env, file)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
