package askeval

import (
	"context"
	"slices"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/examplerows"
	"github.com/rowcall/rowcall/internal/vectors"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// TestShippedExamplesUppercase asks the rows a new host ships with (the
// example http and flow rows and the built-in fn modules' rows) "uppercase
// text" as MCP's search_capabilities does (the hosts' hybrid settings, the
// cut-off applied): UPPER ("upper case") ranks above DIR_PATCH, which the
// encoder puts near many questions; the word search reads "uppercase" as
// "upper case" too (sqlstore's splits). Needs the USE-lite weights.
func TestShippedExamplesUppercase(t *testing.T) {
	enc := loadEncoder(t)
	rows := examplerows.HTTPRows()
	for _, e := range wasmexamples.All() {
		r := rowcall.NewRow(e.Key, rowcall.TypeFn)
		r.Target, r.Content, r.Category = e.Name, e.Content, "examples"
		rows = append(rows, r)
	}
	ctx := context.Background()
	store, db, err := NewStore(ctx, t.TempDir(), rows)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ix, err := EmbedRows(enc, rows, false, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h := Hybrid{Store: store, Enc: enc, Index: ix, Weight: vectors.Weight, K: vectors.K, Hub: vectors.Hub, Near: true}
	keys, err := h.Rank(ctx, "uppercase text")
	if err != nil {
		t.Fatal(err)
	}
	upper, patch := slices.Index(keys, "UPPER"), slices.Index(keys, "DIR_PATCH")
	if upper < 0 || (patch >= 0 && patch < upper) {
		t.Errorf(`"uppercase text" ranks %v: want UPPER above DIR_PATCH`, keys)
	}
}
