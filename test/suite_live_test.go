package test

import (
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/testenv"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// suiteLiveEdit: an fn row edited behind the host's back — straight in its
// database, as another host sharing it would — runs its new definition on the
// next call. On every host that call first runs speculatively on
// the cached row and its receipt's INSERT finds the event log moved, so it is
// run again; nothing of the thrown-away run is stored, and the chain still
// verifies.
func suiteLiveEdit(t *testing.T, tg *target) {
	h := tg.host
	echo, _ := wasmexamples.ByName("echo")
	expect(t, putModule(t, h, "s_live", echo.Wasm), 200, nil)
	createRow(t, h, map[string]any{"key": "S_LIVE", "type": "fn", "target": "s_live", "content": "# WHAT: live echo\n[\"$1\"]"})
	for range 3 { // the first call caches the row; the next ones run on the cache
		expect(t, dispatchCall(t, h, "S_LIVE", "a"), 200, map[string]any{"ok": true, "result": "a"})
	}
	before := receiptCount(t, tg)
	if _, err := tg.DB(t).Exec(`UPDATE directory SET content = ? WHERE key = 'S_LIVE'`, "# WHAT: live echo\n[\"edited\",\"$1\"]"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // past the host's 1 ms look at the event log
	got := dispatchCall(t, h, "S_LIVE", "a")
	expect(t, got, 200, map[string]any{"ok": true, "result": "edited a"})
	if n := receiptCount(t, tg); n != before+1 {
		t.Fatalf("%d receipts stored by one call after the edit, want 1", n-before)
	}
	chain := receiptChain(t, h)
	if err := testenv.Verify(receiptKeys(t, h), chain); err != nil || len(chain) != before+1 {
		t.Fatalf("chain of %d receipts (%d stored): %v", len(chain), before+1, err)
	}
}

func receiptCount(t *testing.T, tg *target) int {
	t.Helper()
	var n int
	if err := tg.DB(t).QueryRow(`SELECT COUNT(*) FROM receipts`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
