package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/testenv"
)

// receipt verify checks an export as it reads it: verifying a 40,000-receipt
// chain (about 60 MB of JSON) keeps the live heap within a few MB, where
// reading it whole held hundreds.
func TestReceiptVerifyStreams(t *testing.T) {
	signer, err := ledger.NewSigner(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	b, _ := json.Marshal(map[string]any{"keys": []ledger.PublicKey{signer.Public()}})
	os.WriteFile(keys, b, 0o600)
	chain := filepath.Join(dir, "chain.json")
	f, err := os.Create(chain)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"receipts":[`)
	const total, group = 40000, 256
	seq, head := int64(0), ""
	for done := 0; done < total; done += group {
		rs := make([]*rowcall.Receipt, min(group, total-done))
		for i := range rs {
			rs[i] = &rowcall.Receipt{ID: fmt.Sprintf("inv_%010d", done+i), Trace: "t_x", Actor: "owner", Key: "K", Type: rowcall.TypeFn,
				Runner: "fn", StartedAt: "2026-12-01T00:00:00.000Z", OK: true, Material: true, Outcome: "ok",
				Input: strings.Repeat("a", 64), Output: strings.Repeat("b", 64), Contract: strings.Repeat("c", 64)}
		}
		signer.SignChain(rs, seq, head)
		seq, head = rs[len(rs)-1].Seq, rs[len(rs)-1].SHA256
		for i, r := range rs {
			if done+i > 0 {
				w.WriteByte(',')
			}
			j, _ := json.MarshalIndent(r, "  ", "  ")
			w.Write(j)
		}
	}
	w.WriteString("]}\n")
	w.Flush()
	f.Close()
	fi, _ := os.Stat(chain)

	runtime.GC()
	base, peak := testenv.HeapPeak(func() {
		code, out, errs := run(t, nil, "receipt", "verify", chain, "--keys", keys)
		if code != 0 || !strings.Contains(out, "OK: 40000 receipts, seq 1 to 40000") {
			t.Fatalf("verify exited %d: %s %s", code, out, errs)
		}
	})
	if grew := int64(peak) - int64(base); grew > 16<<20 {
		t.Fatalf("verifying a %d MB export grew the live heap by %d MB, want under 16", fi.Size()>>20, grew>>20)
	}
}
