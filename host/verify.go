package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
)

// receiptCmd dispatches `rowcall receipt …`.
func receiptCmd(args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "verify":
			return verifyReceipts(args[1:])
		case "export":
			return exportReceipts(args[1:])
		case "keys":
			return fetchKeys(args[1:])
		case "checkpoint":
			return fetchCheckpoint(args[1:])
		}
	}
	return receipt(args)
}

// verifyReceipts implements `rowcall receipt verify FILE --keys KEYS
// [--checkpoint CP]`: offline, with no access to the server, it checks one
// receipt (its hash and signature) or a whole exported chain (and every link),
// naming the first bad one; then the chain against the checkpoint its export
// carries and against a checkpoint saved earlier (CP: the text of
// /.well-known/rowcall-checkpoint or an earlier export), which catches a chain
// cut short or rewritten since.
func verifyReceipts(args []string) error {
	flags := map[string]string{"keys": "", "checkpoint": ""}
	var files []string
	for i := 0; i < len(args); i++ {
		name, value, eq := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if _, ok := flags[name]; ok && strings.HasPrefix(args[i], "-") {
			if !eq && i+1 < len(args) {
				value = args[i+1]
				i++
			}
			flags[name] = value
		} else {
			files = append(files, args[i])
		}
	}
	if len(files) != 1 || flags["keys"] == "" {
		return fmt.Errorf("usage: rowcall receipt verify FILE --keys KEYS.json [--checkpoint CHECKPOINT]   (FILE: one receipt, or a chain from `rowcall receipt export`; - for stdin; CHECKPOINT: saved from `rowcall receipt checkpoint` or an earlier export)")
	}
	var pub struct {
		Keys []ledger.PublicKey `json:"keys"`
	}
	if err := readJSON(flags["keys"], &pub); err != nil {
		return err
	}
	keys, err := ledger.ParseKeys(pub.Keys)
	if err != nil {
		return err
	}
	chain, own, err := readReceipts(files[0])
	if err != nil {
		return err
	}
	type checkpoint struct{ from, text string }
	var checkpoints []checkpoint
	if own != "" {
		checkpoints = append(checkpoints, checkpoint{"the export's own checkpoint", own})
	}
	if file := flags["checkpoint"]; file != "" {
		text, err := readCheckpoint(file)
		if err != nil {
			return err
		}
		checkpoints = append(checkpoints, checkpoint{"checkpoint " + file, text})
	}
	if len(chain) == 1 && len(checkpoints) == 0 {
		if err := keys.Check(&chain[0]); err != nil {
			return fmt.Errorf("FAILED: %w", err)
		}
		fmt.Printf("OK: receipt %s (seq %d) is intact and signed by key %s\n", chain[0].ID, chain[0].Seq, chain[0].KeyID)
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
		fmt.Println("OK: 0 receipts")
	} else {
		fmt.Printf("OK: %d receipts, seq %d to %d, every one intact, signed and linked to the one before\n", len(chain), chain[0].Seq, chain[len(chain)-1].Seq)
	}
	for _, line := range agreed {
		fmt.Println(line)
	}
	return nil
}

// readReceipts accepts one receipt, a confirm answer {"receipt":…}, an export
// {"receipts":[…],"checkpoint":…} or a plain array; checkpoint is the
// export's signed checkpoint, if it has one.
func readReceipts(file string) (chain []rowcall.Receipt, checkpoint string, err error) {
	var raw json.RawMessage
	if err := readJSON(file, &raw); err != nil {
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
func readCheckpoint(file string) (string, error) {
	r, err := openInput(file)
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

func readJSON(file string, v any) error {
	r, err := openInput(file)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// exportReceipts implements `rowcall receipt export`: the whole chain as one
// JSON document on stdout, {"checkpoint":…,"receipts":[…]}. The checkpoint
// is fetched first, so the chain exported after it reaches it.
func exportReceipts(args []string) error {
	c, _, err := clientFlags("receipt export", args, nil)
	if err != nil {
		return err
	}
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
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// fetchCheckpoint implements `rowcall receipt checkpoint`: the host's signed
// chain head, to save and give to `rowcall receipt verify --checkpoint` later.
func fetchCheckpoint(args []string) error {
	c, _, err := clientFlags("receipt checkpoint", args, nil)
	if err != nil {
		return err
	}
	status, text, err := c.text("/.well-known/rowcall-checkpoint")
	if err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("HTTP %d: %s", status, text)
	}
	_, err = io.WriteString(os.Stdout, text)
	return err
}

// fetchKeys implements `rowcall receipt keys`: the host's public keys, to keep
// beside an export for offline verification.
func fetchKeys(args []string) error {
	c, _, err := clientFlags("receipt keys", args, nil)
	if err != nil {
		return err
	}
	status, out, err := c.do("GET", "/.well-known/rowcall-receipt-keys", nil)
	if err != nil {
		return err
	}
	if status != 200 {
		return fmt.Errorf("HTTP %d: %v", status, out)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// openInput opens file, or standard input for "-".
func openInput(file string) (io.ReadCloser, error) {
	if file == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(file)
}
