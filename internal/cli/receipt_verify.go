package cli

import (
	"bufio"
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
	if len(args) == 1 && c.keys == "" {
		return fmt.Errorf("receipt verify needs --keys KEYS.json: the host's public keys, saved with `rowcall receipt keys > keys.json` (also at /.well-known/rowcall-receipt-keys)")
	}
	if len(args) != 1 {
		return fmt.Errorf("usage: rowcall receipt verify FILE --keys KEYS.json [--checkpoint CHECKPOINT]   (FILE: one receipt, or a chain from `rowcall receipt export`; - for stdin; CHECKPOINT: saved from `rowcall receipt checkpoint` or an earlier export)")
	}
	w := env.Stdout
	keys, err := readKeys(env, c.keys)
	if err != nil {
		return err
	}
	type checkpoint struct {
		from string
		cp   ledger.Checkpoint
	}
	var checkpoints []checkpoint
	open := func(from, text string) error {
		cp, err := keys.OpenCheckpoint([]byte(text))
		if err != nil {
			return fmt.Errorf("FAILED: %s: %w", from, err)
		}
		checkpoints = append(checkpoints, checkpoint{from, cp})
		return nil
	}
	if file := c.checkpoint; file != "" {
		text, err := readCheckpoint(env, file)
		if err != nil {
			return err
		}
		if err := open("checkpoint "+file, text); err != nil {
			return err
		}
	}
	// The receipts are checked as they are read, one at a time (ledger.Chain):
	// memory does not grow with the chain.
	chain := keys.NewChain()
	for _, c := range checkpoints {
		chain.Watch(c.cp.Size)
	}
	ownFirst := func(text string) error { // the export's own checkpoint, before its receipts
		if err := open("the export's own checkpoint", text); err != nil {
			return err
		}
		checkpoints = append(checkpoints[len(checkpoints)-1:], checkpoints[:len(checkpoints)-1]...)
		chain.Watch(checkpoints[0].cp.Size)
		return nil
	}
	var first rowcall.Receipt
	var broken error
	add := func(r *rowcall.Receipt) {
		if chain.Count() == 0 {
			first = *r
		}
		if broken == nil {
			broken = chain.Add(r)
		}
	}
	if err := readReceipts(env, args[0], ownFirst, add); err != nil {
		return err
	}
	if chain.Count() == 1 && len(checkpoints) == 0 {
		if err := keys.Check(&first); err != nil {
			return fmt.Errorf("FAILED: %w", err)
		}
		fmt.Fprintf(w, "OK: receipt %s (seq %d) is intact and signed by key %s\n", first.ID, first.Seq, first.KeyID)
		return nil
	}
	if broken != nil {
		return fmt.Errorf("FAILED: %w", broken)
	}
	var agreed []string
	for _, c := range checkpoints {
		if err := chain.Match(c.cp); err != nil {
			return fmt.Errorf("FAILED: %s: %w", c.from, err)
		}
		agreed = append(agreed, fmt.Sprintf("OK: the chain agrees with %s (%s, seq %d)", c.from, c.cp.Origin, c.cp.Size))
	}
	if chain.Count() == 0 {
		fmt.Fprintln(w, "OK: 0 receipts")
	} else {
		fmt.Fprintf(w, "OK: %d receipts, seq %d to %d, every one intact, signed and linked to the one before\n", chain.Count(), chain.First(), chain.Last())
	}
	for _, line := range agreed {
		fmt.Fprintln(w, line)
	}
	return nil
}

// readReceipts streams file to add, one receipt at a time: one receipt, a
// confirm answer {"receipt":…}, an export {"checkpoint":…,"receipts":[…]} or
// a plain array. An export's signed checkpoint goes to checkpoint before its
// receipts are read; one that comes after them is refused.
func readReceipts(env *Env, file string, checkpoint func(string) error, add func(*rowcall.Receipt)) error {
	in, err := openInput(env, file)
	if err != nil {
		return err
	}
	defer in.Close()
	dec := json.NewDecoder(bufio.NewReader(in))
	bad := func(err error) error { return fmt.Errorf("%s is not receipts JSON: %w", file, err) }
	list := func() error { // the '[' is read
		for dec.More() {
			var r rowcall.Receipt
			if err := dec.Decode(&r); err != nil {
				return bad(err)
			}
			add(&r)
		}
		_, err := dec.Token()
		return err
	}
	tok, err := dec.Token()
	if err != nil {
		return bad(err)
	}
	switch tok {
	case json.Delim('['):
		return list()
	case json.Delim('{'):
	default:
		return fmt.Errorf("%s holds no receipt", file)
	}
	fields := map[string]json.RawMessage{} // of one receipt, or an answer's
	listed := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		name, _ := key.(string)
		if name == "receipts" {
			if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
				return bad(fmt.Errorf("receipts is not a list"))
			}
			if err := list(); err != nil {
				return err
			}
			listed = true
			continue
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return bad(err)
		}
		if name == "checkpoint" {
			var text string
			if json.Unmarshal(v, &text) == nil && text != "" {
				if listed {
					return fmt.Errorf("%s: its checkpoint comes after its receipts; put it first, as rowcall receipt export does, or give it as --checkpoint", file)
				}
				if err := checkpoint(text); err != nil {
					return err
				}
			}
		}
		fields[name] = v
	}
	if listed {
		return nil
	}
	var one rowcall.Receipt
	if r, ok := fields["receipt"]; ok {
		if err := json.Unmarshal(r, &one); err != nil {
			return bad(err)
		}
	} else {
		b, _ := json.Marshal(fields)
		json.Unmarshal(b, &one)
	}
	if one.ID == "" {
		return fmt.Errorf("%s holds no receipt", file)
	}
	add(&one)
	return nil
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

// readKeys reads the host's public keys from a file `rowcall receipt keys`
// saved.
func readKeys(env *Env, file string) (ledger.Keys, error) {
	var pub struct {
		Keys []ledger.PublicKey `json:"keys"`
	}
	if err := readJSON(env, file, &pub); err != nil {
		return nil, err
	}
	keys, err := ledger.ParseKeys(pub.Keys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return keys, nil
}
