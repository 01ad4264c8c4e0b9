package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/ledger"
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
		}
	}
	return receipt(args)
}

// verifyReceipts implements `rowcall receipt verify FILE --keys KEYS`: offline,
// with no access to the server, it checks one receipt (its hash and signature)
// or a whole exported chain (and every link), naming the first bad one.
func verifyReceipts(args []string) error {
	fs := flag.NewFlagSet("receipt verify", flag.ContinueOnError)
	keysFile := fs.String("keys", "", "the host's public keys, as saved by `rowcall receipt keys` (/.well-known/rowcall-receipt-keys)")
	var files []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--keys" && i+1 < len(args) {
			*keysFile = args[i+1]
			i++
		} else if v, ok := strings.CutPrefix(args[i], "--keys="); ok {
			*keysFile = v
		} else {
			files = append(files, args[i])
		}
	}
	if len(files) != 1 || *keysFile == "" {
		return fmt.Errorf("usage: rowcall receipt verify FILE --keys KEYS.json   (FILE: one receipt, or a chain from `rowcall receipt export`; - for stdin)")
	}
	var pub struct {
		Keys []ledger.PublicKey `json:"keys"`
	}
	if err := readJSON(*keysFile, &pub); err != nil {
		return err
	}
	keys, err := ledger.ParseKeys(pub.Keys)
	if err != nil {
		return err
	}
	chain, err := readReceipts(files[0])
	if err != nil {
		return err
	}
	if len(chain) == 1 {
		if err := keys.Check(&chain[0]); err != nil {
			return fmt.Errorf("FAILED: %w", err)
		}
		fmt.Printf("OK: receipt %s (seq %d) is intact and signed by key %s\n", chain[0].ID, chain[0].Seq, chain[0].KeyID)
		return nil
	}
	if err := keys.Verify(chain); err != nil {
		return fmt.Errorf("FAILED: %w", err)
	}
	fmt.Printf("OK: %d receipts, seq %d to %d, every one intact, signed and linked to the one before\n", len(chain), chain[0].Seq, chain[len(chain)-1].Seq)
	return nil
}

// readReceipts accepts one receipt, a confirm answer {"receipt":…}, an export
// {"receipts":[…]} or a plain array.
func readReceipts(file string) ([]rowcall.Receipt, error) {
	var raw json.RawMessage
	if err := readJSON(file, &raw); err != nil {
		return nil, err
	}
	var list []rowcall.Receipt
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	var wrapped struct {
		Receipts []rowcall.Receipt `json:"receipts"`
		Receipt  *rowcall.Receipt  `json:"receipt"`
	}
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return nil, fmt.Errorf("%s is not receipts JSON: %w", file, err)
	}
	if wrapped.Receipt != nil {
		return []rowcall.Receipt{*wrapped.Receipt}, nil
	}
	if wrapped.Receipts != nil {
		return wrapped.Receipts, nil
	}
	var one rowcall.Receipt
	json.Unmarshal(raw, &one)
	if one.ID == "" {
		return nil, fmt.Errorf("%s holds no receipt", file)
	}
	return []rowcall.Receipt{one}, nil
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
// JSON document on stdout.
func exportReceipts(args []string) error {
	c, _, err := clientFlags("receipt export", args, nil)
	if err != nil {
		return err
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
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"receipts": all})
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
