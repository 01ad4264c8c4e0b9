package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// hashedIndex is mapIndex that also reports the text hashes it holds
// (vectors.Hasher), as the Vectorize adapter does.
type hashedIndex struct{ mapIndex }

func (x hashedIndex) Hashes(_ context.Context, _ rowcall.EmbedModel, keys []string) (map[string][32]byte, error) {
	out := map[string][32]byte{}
	for _, k := range keys {
		if v, ok := x.mapIndex[k]; ok {
			out[k] = v.TextHash
		}
	}
	return out, nil
}

func (x hashedIndex) Vector(_ context.Context, _ rowcall.EmbedModel, key string) ([]float32, [32]byte, bool) {
	v, ok := x.mapIndex[key]
	return v.Values, v.TextHash, ok
}

// The reindex pages through the directory in key order and embeds the rows
// the index has no current vector for (rows written with no sync, such as
// before an instance's first write); run again it embeds nothing, and force
// embeds every row it looks at.
func TestVectorSyncReindex(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t)
	store := sqlstore.New(db)
	for i := range 5 {
		r := rowcall.NewRow(fmt.Sprintf("ROW_%d", i), rowcall.TypeHTTP)
		r.Target, r.Content = "GET https://example.test/", fmt.Sprintf("# WHAT: Row number %d.", i)
		if _, err := store.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	emb, idx := &hashEmbedder{}, hashedIndex{mapIndex{}}
	s := newVectorSync(db, emb, idx)
	pass := func(force bool) (checked, embedded int) {
		for after := ""; ; {
			rep, err := s.reindex(ctx, after, 2, force)
			if err != nil {
				t.Fatal(err)
			}
			checked, embedded = checked+rep.Checked, embedded+rep.Embedded
			if rep.Next == "" {
				return
			}
			after = rep.Next
		}
	}
	if c, e := pass(false); c != 5 || e != 5 || len(idx.mapIndex) != 5 {
		t.Fatalf("first reindex: checked %d, embedded %d, index holds %d", c, e, len(idx.mapIndex))
	}
	if c, e := pass(false); c != 5 || e != 0 {
		t.Fatalf("second reindex: checked %d, embedded %d, want 5 and 0", c, e)
	}
	if c, e := pass(true); c != 5 || e != 5 {
		t.Fatalf("forced reindex: checked %d, embedded %d, want 5 and 5", c, e)
	}
}
