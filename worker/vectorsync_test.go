package main

import (
	"context"
	"errors"
	"hash/fnv"
	"maps"
	"slices"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// hashEmbedder embeds a text as a vector drawn from its hash (the sync only
// moves vectors; what they mean is the workerd test's), counting the texts
// it embeds; fail makes the next call fail.
type hashEmbedder struct {
	texts []string
	fail  bool
}

func (e *hashEmbedder) Model() rowcall.EmbedModel {
	return rowcall.EmbedModel{Provider: "test", Name: "hash", Dim: 4}
}

func (e *hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if e.fail {
		e.fail = false
		return nil, errors.New("embedding service down")
	}
	e.texts = append(e.texts, texts...)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New32a()
		h.Write([]byte(t))
		out[i] = []float32{float32(h.Sum32()), 1, 2, 3}
		normalise(out[i])
	}
	return out, nil
}

// mapIndex is a rowcall.VectorIndex in a map.
type mapIndex map[string]rowcall.Vector

func (x mapIndex) Upsert(_ context.Context, _ rowcall.EmbedModel, vs []rowcall.Vector) error {
	for _, v := range vs {
		x[v.Key] = v
	}
	return nil
}

func (x mapIndex) Delete(_ context.Context, _ rowcall.EmbedModel, keys []string) error {
	for _, k := range keys {
		delete(x, k)
	}
	return nil
}

func (x mapIndex) Nearest(context.Context, rowcall.EmbedModel, []float32, int, rowcall.VectorFilter) ([]rowcall.VectorHit, error) {
	return nil, nil
}

// The sync reads the event log past its cursor and applies each key's net
// change: new and edited rows embedded, deleted ones removed, an edit of
// nothing embedded or filtered on skipped, a failed pass tried again.
func TestVectorSync(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t)
	store := sqlstore.New(db)
	row := func(key, category, what string) rowcall.Row {
		r := rowcall.NewRow(key, rowcall.TypeHTTP)
		r.Category, r.Target, r.Content = category, "GET https://example.test/"+key, "# WHAT: "+what
		return r
	}
	before, err := store.Create(ctx, row("OLD", "misc", "A row from before the first write."))
	if err != nil {
		t.Fatal(err)
	}
	emb, idx := &hashEmbedder{}, mapIndex{}
	s := newVectorSync(db, emb, idx)
	write := func(f func() error) {
		t.Helper()
		s.before(ctx)
		if err := f(); err != nil {
			t.Fatal(err)
		}
		s.after(ctx)
	}
	keys := func() []string { return slices.Sorted(maps.Keys(idx)) }

	write(func() error {
		for _, r := range []rowcall.Row{row("A", "time", "The time."), row("B", "weather", "The weather.")} {
			if _, err := store.Create(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if got := keys(); !slices.Equal(got, []string{"A", "B"}) || len(emb.texts) != 2 {
		t.Fatalf("after two creates: %v, %d embedded (the row from before the first write is the reindex's)", got, len(emb.texts))
	}
	if v := idx["A"]; v.Category != "time" || !v.Enabled || !v.Visible || v.TextHash != rowcall.EmbedHash(emb.Model(), "The time.") {
		t.Fatalf("A's vector: %+v", v)
	}

	a, _ := store.Get(ctx, "A")
	write(func() error { a.PlannerRank = 7; a, err = store.Replace(ctx, a, 0); return err })
	if len(emb.texts) != 2 {
		t.Fatalf("a planner_rank edit embedded %v", emb.texts[2:])
	}
	write(func() error { a.Enabled = 0; a, err = store.Replace(ctx, a, 0); return err })
	if v := idx["A"]; v.Enabled || len(emb.texts) != 3 {
		t.Fatalf("after disabling A: %+v, %d embedded", v, len(emb.texts))
	}

	// Created and deleted within one pass: deleted, never embedded.
	write(func() error {
		if _, err := store.Create(ctx, row("C", "misc", "Short-lived.")); err != nil {
			return err
		}
		if err := store.Delete(ctx, "C", 0); err != nil {
			return err
		}
		return store.Delete(ctx, "B", 0)
	})
	if got := keys(); !slices.Equal(got, []string{"A"}) || len(emb.texts) != 3 {
		t.Fatalf("after deletes: %v, %d embedded", got, len(emb.texts))
	}

	// A failed pass leaves the cursor; the next write's pass does it.
	emb.fail = true
	write(func() error {
		_, err := store.Create(ctx, row("D", "misc", "Written while the service was down."))
		return err
	})
	if r := s.snapshot(); r.Failures != 1 || r.LastError != "embedding service down" || slices.Contains(keys(), "D") {
		t.Fatalf("after a failure: %+v, %v", r, keys())
	}
	write(func() error { _, err := store.Create(ctx, row("E", "misc", "The next write.")); return err })
	if got := keys(); !slices.Equal(got, []string{"A", "D", "E"}) {
		t.Fatalf("after the retry: %v", got)
	}
	if _, ok := idx[before.Key]; ok {
		t.Fatal("a row from before the first write was embedded")
	}
}
