package main

import (
	"cmp"
	"context"
	"errors"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/dot"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/vectors"
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
		if err := store.Delete(ctx, "C", 0, ""); err != nil {
			return err
		}
		return store.Delete(ctx, "B", 0, "")
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

// bagOfWords embeds a text as its words hashed into 32 dimensions: texts
// sharing words are near. While hold is set, the embedding of the text hold
// names waits until let is closed, telling held once it is under way.
type bagOfWords struct {
	hold      string
	held, let chan struct{}
}

func (e *bagOfWords) Model() rowcall.EmbedModel {
	return rowcall.EmbedModel{Provider: "test", Name: "words", Dim: 32}
}

func (e *bagOfWords) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if e.hold != "" && slices.Contains(texts, e.hold) {
		e.hold = ""
		close(e.held)
		<-e.let
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = make([]float32, 32)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(w, ".,:#")))
			out[i][h.Sum32()%32]++
		}
		normalise(out[i])
	}
	return out, nil
}

// Nearest is an exact cosine scan, filtered as Vectorize's metadata is.
func (x mapIndex) Nearest(_ context.Context, m rowcall.EmbedModel, q []float32, k int, f rowcall.VectorFilter) ([]rowcall.VectorHit, error) {
	var hits []rowcall.VectorHit
	for _, v := range x {
		if f.Passes(v.Key, v.Category, v.Enabled && v.Visible) {
			c := []float32{0}
			dot.Scores(q, v.Values, m.Dim, c)
			hits = append(hits, rowcall.VectorHit{Key: v.Key, Cosine: float64(c[0])})
		}
	}
	slices.SortFunc(hits, func(a, b rowcall.VectorHit) int { return cmp.Compare(b.Cosine, a.Cosine) })
	return hits[:min(k, len(hits))], nil
}

// Two isolates each keep Vectorize current after their own writes, and
// Vectorize has no conditional write: the first isolate's embedding of a
// row's old text ends after the second isolate stored the new text's
// vector, and its upsert replaces it. The first isolate then finds the row
// changed and stores the current text's vector again, so the row's
// neighbours are those of its new text; a row deleted meanwhile loses the
// vector the late upsert gave it back.
func TestVectorizeLateOldTextIsReplaced(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t)
	store := sqlstore.New(db)
	newRow := func(key, what string) rowcall.Row {
		r := rowcall.NewRow(key, rowcall.TypeHTTP)
		r.Category, r.Target, r.Content = "misc", "GET https://example.test/"+key, "# WHAT: "+what
		return r
	}
	idx := mapIndex{}
	old := newRow("PAY", "return money to a buyer")
	first := &bagOfWords{hold: rowcall.EmbedText(&old), held: make(chan struct{}), let: make(chan struct{})}
	a, b := newVectorSync(db, first, idx), newVectorSync(db, &bagOfWords{}, idx)
	a.before(ctx)
	b.before(ctx)

	// Isolate A writes the row at its old text (and two others) and embeds them, slowly.
	for _, r := range []rowcall.Row{old, newRow("REFUND", "give money back to a buyer"), newRow("MAIL", "send a parcel to an inbox")} {
		if _, err := store.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	aDone := make(chan struct{})
	go func() { defer close(aDone); a.after(ctx) }()
	<-first.held
	// Isolate B changes the text and stores the new text's vector first.
	cur, err := store.Get(ctx, "PAY")
	if err != nil {
		t.Fatal(err)
	}
	cur.Content = "# WHAT: send a letter to an inbox"
	if cur, err = store.Replace(ctx, cur, cur.Version); err != nil {
		t.Fatal(err)
	}
	b.after(ctx)
	m := first.Model()
	if idx["PAY"].TextHash != rowcall.EmbedHash(m, rowcall.EmbedText(&cur)) {
		t.Fatal("isolate B did not store the new text's vector")
	}
	close(first.let) // A's old text lands last
	<-aDone

	if r := a.snapshot(); r.LastError != "" {
		t.Fatalf("isolate A's sync: %+v", r)
	}
	if idx["PAY"].TextHash != rowcall.EmbedHash(m, rowcall.EmbedText(&cur)) {
		t.Error("Vectorize holds the row's old text's vector after its new text's was stored")
	}
	rank := &vectors.Ranker{Words: store, Embedder: first, Index: idx, Weight: vectors.Weight}
	near := func(text string) []string {
		q, _ := first.Embed(ctx, []string{text})
		hits, err := rank.Similar(ctx, q[0], "", rowcall.SearchFilter{}, 3, -1)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, h := range hits {
			keys = append(keys, h.Key)
		}
		return keys
	}
	if got := near("# WHAT: send a letter to an inbox"); len(got) == 0 || got[0] != "PAY" {
		t.Errorf("nearest the row's new text: %v, want PAY first", got)
	}
	if got := near("# WHAT: return money to a buyer"); len(got) == 0 || got[0] != "REFUND" {
		t.Errorf("nearest the row's old text: %v, want REFUND first (PAY no longer says it)", got)
	}

	// A row deleted while A embeds its text: the late upsert's vector is removed.
	gone := newRow("GONE", "a row that is deleted at once")
	first.hold, first.held, first.let = rowcall.EmbedText(&gone), make(chan struct{}), make(chan struct{})
	if _, err := store.Create(ctx, gone); err != nil {
		t.Fatal(err)
	}
	aDone = make(chan struct{})
	go func() { defer close(aDone); a.after(ctx) }()
	<-first.held
	if err := store.Delete(ctx, "GONE", 0, ""); err != nil {
		t.Fatal(err)
	}
	b.after(ctx)
	close(first.let)
	<-aDone
	if _, ok := idx["GONE"]; ok {
		t.Error("a deleted row's vector is in Vectorize after a late upsert of its text")
	}
}

// hookIndex is a mapIndex whose Delete first runs beforeDelete (once).
type hookIndex struct {
	mapIndex
	beforeDelete func()
}

func (x *hookIndex) Delete(ctx context.Context, m rowcall.EmbedModel, keys []string) error {
	if f := x.beforeDelete; f != nil {
		x.beforeDelete = nil
		f()
	}
	return x.mapIndex.Delete(ctx, m, keys)
}

// isolates is a directory whose index two isolates keep current: A created
// the row PAY and synced, then B placed its cursor.
type isolates struct {
	store *sqlstore.Store
	pay   rowcall.Row // PAY as it was created
	a, b  *vectorSync
	embB  *hashEmbedder // B's
}

func newIsolates(t *testing.T, idx rowcall.VectorIndex) isolates {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t)
	x := isolates{store: sqlstore.New(db), pay: rowcall.NewRow("PAY", rowcall.TypeHTTP), embB: &hashEmbedder{}}
	x.pay.Category, x.pay.Target, x.pay.Content = "misc", "GET https://example.test/pay", "# WHAT: Return money to a buyer."
	x.a, x.b = newVectorSync(db, &hashEmbedder{}, idx), newVectorSync(db, x.embB, idx)
	x.a.before(ctx)
	if _, err := x.store.Create(ctx, x.pay); err != nil {
		t.Fatal(err)
	}
	x.a.after(ctx)
	x.b.before(ctx)
	return x
}

// holds fails the test unless idx holds the vector of PAY as it is now, or
// none when there is no such row, or either isolate's sync failed.
func (x isolates) holds(t *testing.T, idx mapIndex) {
	t.Helper()
	for _, s := range []*vectorSync{x.a, x.b} {
		if r := s.snapshot(); r.LastError != "" {
			t.Fatalf("sync: %+v", r)
		}
	}
	v, ok := idx["PAY"]
	r, err := x.store.Get(context.Background(), "PAY")
	switch {
	case err != nil && !ok:
	case err != nil:
		t.Error("PAY does not exist, but the index holds a vector for it")
	case !ok:
		t.Error("PAY exists, but the index holds no vector for it (ask finds it by words alone until its next edit or a reindex)")
	case v.TextHash != rowcall.EmbedHash(x.embB.Model(), rowcall.EmbedText(&r)) || v.Category != r.Category || v.Enabled != (r.Enabled != 0):
		t.Error("the index holds a vector of PAY other than its current text's")
	}
}

// Isolate A serves the delete of a row; while its Vectorize delete is on its
// way, isolate B creates the row again and syncs, its upsert landing first.
// A's delete then removes the new row's vector, so A reads the row again
// after its delete, as after an upsert, and stores the vector of the row
// that exists now.
func TestVectorSyncDeleteRacingRecreateLeavesVector(t *testing.T) {
	ctx := context.Background()
	idx := &hookIndex{mapIndex: mapIndex{}}
	x := newIsolates(t, idx)
	x.holds(t, idx.mapIndex)
	if err := x.store.Delete(ctx, "PAY", 0, ""); err != nil { // served by A
		t.Fatal(err)
	}
	idx.beforeDelete = func() { // served by B, and synced, while A's delete is on its way
		again := x.pay
		again.Content = "# WHAT: Refund a buyer's payment."
		if _, err := x.store.Create(ctx, again); err != nil {
			t.Fatal(err)
		}
		x.b.after(ctx)
	}
	x.a.after(ctx)
	if idx.beforeDelete != nil {
		t.Fatal("A's sync deleted nothing")
	}
	x.holds(t, idx.mapIndex)
}

// Isolate A serves the delete of a row and syncs: its vector goes. Isolate
// B, whose cursor is from before that delete, serves the same row's
// creation again and syncs: the row is as it was before the delete, but
// the index no longer holds its vector, so B stores it.
func TestVectorSyncRecreateAfterDeleteSyncedElsewhere(t *testing.T) {
	ctx := context.Background()
	idx := mapIndex{}
	x := newIsolates(t, idx)
	if err := x.store.Delete(ctx, "PAY", 0, ""); err != nil { // served by A
		t.Fatal(err)
	}
	x.a.after(ctx)
	if _, ok := idx["PAY"]; ok {
		t.Fatal("A's sync left the deleted row's vector")
	}
	if _, err := x.store.Create(ctx, x.pay); err != nil { // served by B
		t.Fatal(err)
	}
	x.b.after(ctx)
	x.holds(t, idx)
}

// The same with edits: isolate A serves an edit of a row's text and syncs
// (the index holds the new text's vector); isolate B, whose cursor is from
// before that edit, serves an edit back to the old text and syncs. Across
// B's events the row ends as it began, but the index holds A's vector, so
// B stores the old text's again. An edit of nothing embedded or filtered on
// still embeds nothing.
func TestVectorSyncEditBackAfterEditSyncedElsewhere(t *testing.T) {
	ctx := context.Background()
	idx := mapIndex{}
	x := newIsolates(t, idx)
	cur, err := x.store.Get(ctx, "PAY")
	if err != nil {
		t.Fatal(err)
	}
	cur.Content = "# WHAT: Send a letter to an inbox." // served by A
	if cur, err = x.store.Replace(ctx, cur, 0); err != nil {
		t.Fatal(err)
	}
	x.a.after(ctx)
	x.holds(t, idx)
	cur.Content = x.pay.Content // served by B
	if cur, err = x.store.Replace(ctx, cur, 0); err != nil {
		t.Fatal(err)
	}
	x.b.after(ctx)
	x.holds(t, idx)

	cur.PlannerRank = 5 // served by B
	if _, err = x.store.Replace(ctx, cur, 0); err != nil {
		t.Fatal(err)
	}
	n := len(x.embB.texts)
	x.b.after(ctx)
	if len(x.embB.texts) != n {
		t.Errorf("a planner_rank edit embedded %v", x.embB.texts[n:])
	}
	x.holds(t, idx)
}
