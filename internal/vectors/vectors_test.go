package vectors_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/learn"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/sqlstore"
)

// words is a stand-in embedder for these tests (the real encoder's weights
// are 28 MB): each word hashed into one of 64 dimensions, L2-normalised, so
// texts sharing words are near and texts sharing none are orthogonal.
type words struct {
	name  string
	calls atomic.Int64 // texts embedded
}

func (w *words) Model() rowcall.EmbedModel {
	return rowcall.EmbedModel{Provider: "test", Name: w.name, Dim: 64}
}

func (w *words) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		w.calls.Add(1)
		v := make([]float32, 64)
		for _, word := range strings.Fields(strings.ToLower(strings.Trim(t, "."))) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(word, ".,")))
			v[h.Sum32()%64]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		for j := range v {
			if n > 0 {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

func row(key, category, what string) rowcall.Row {
	r := rowcall.NewRow(key, rowcall.TypeFn)
	r.Target, r.Category, r.Content = "m", category, "# WHAT: "+what+"\n# WHEN_TO_USE: "+what
	return r
}

func keys(hits []rowcall.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Row.Key)
	}
	return out
}

// TestFuse works the mix by hand on three rows: words alone (weight 1) keep
// bm25's order, cosine alone (weight 0) the vectors', and at 0.5 a row found
// by both sides wins over a row found by one.
func TestFuse(t *testing.T) {
	hit := func(key string, bm25 float64) rowcall.Hit {
		return rowcall.Hit{Row: rowcall.Row{Key: key}, Score: bm25}
	}
	words := []rowcall.Hit{hit("A", -4), hit("B", -3)} // words: A 1, B 0.75, C 0
	vecs := []rowcall.VectorHit{{Key: "C", Cosine: 1}, {Key: "B", Cosine: 0.8}, {Key: "A", Cosine: 0}}
	for _, c := range []struct {
		weight float64
		want   []string
		score0 float64
	}{
		{1, []string{"A", "B"}, 1},            // 1, 0.75 (vectors ignored)
		{0, []string{"C", "B", "A"}, 1},       // 1, 0.8, 0
		{0.5, []string{"B", "A", "C"}, 0.775}, // 0.775, 0.5, 0.5 (ties by key)
	} {
		got := vectors.Fuse(words, vecs, c.weight)
		if !slices.Equal(keys(got), c.want) || math.Abs(got[0].Score-c.score0) > 1e-9 {
			t.Errorf("weight %v: %v (best %v), want %v (best %v)", c.weight, keys(got), got[0].Score, c.want, c.score0)
		}
	}
}

// TestTop checks the partial selection against a full sort.
func TestTop(t *testing.T) {
	scores := []float32{0.1, 0.9, 0.3, 0.9, -1, 0.5, 0.2}
	if got := vectors.Top(scores, 4, nil, nil); !slices.Equal(got, []int{1, 3, 5, 2}) {
		t.Errorf("top 4 = %v", got)
	}
	if got := vectors.Top(scores, 2, func(i int) bool { return i != 1 }, nil); !slices.Equal(got, []int{3, 5}) {
		t.Errorf("top 2 without 1 = %v", got)
	}
	if vectors.Top(scores, 0, nil, nil) != nil {
		t.Error("top 0 is not empty")
	}
}

// fixture is a store with rows, an indexer over a Table, and a ranker.
type fixture struct {
	store *sqlstore.Store
	emb   *words
	table *vectors.Table
	idx   *vectors.Indexer
	rank  *vectors.Ranker
}

func newFixture(t *testing.T, store *sqlstore.Store, model string) *fixture {
	f := &fixture{store: store, emb: &words{name: model}}
	f.table = vectors.NewTable(store, 0)
	f.idx = &vectors.Indexer{Embedder: f.emb, Index: f.table, Store: store}
	f.rank = &vectors.Ranker{Words: store, Embedder: f.emb, Index: f.table, Weight: vectors.Weight}
	return f
}

func (f *fixture) pass(t *testing.T) {
	t.Helper()
	if err := f.idx.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func seed(t *testing.T) *sqlstore.Store {
	store := sqlstore.New(testdb.Open(t))
	rows := []rowcall.Row{
		row("PAY_REFUND", "payments", "return money to a buyer"),
		row("PAY_LINK", "payments", "collect a payment by card"),
		row("MAIL_SEND", "email", "send a letter to an inbox"),
		row("WX_FORECAST", "weather", "tomorrow rain or sun"),
	}
	if err := store.Upsert(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
	return store
}

// TestVectorHitsObeyScopeAndFlags: a query whose best vector hit lies outside
// a token's category, or is disabled or hidden, never returns it; the owner's
// did_you_mean (All) sees disabled rows.
func TestVectorHitsObeyScopeAndFlags(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, seed(t), "m1")
	f.pass(t)
	// "money buyer" shares no word search term with anything but PAY_REFUND's
	// words; "rain sun" only WX_FORECAST's; the scope is email only.
	scope := &rowcall.Scope{Categories: []string{"email"}}
	for _, q := range []string{"return money buyer", "rain sun tomorrow", "letter inbox"} {
		hits, err := f.rank.Search(ctx, q, rowcall.SearchFilter{Scope: scope, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Row.Category != "email" {
				t.Errorf("%q: a token scoped to email sees %s (%s)", q, h.Row.Key, h.Row.Category)
			}
		}
	}
	// Unscoped, the vector side finds the row.
	hits, _ := f.rank.Search(ctx, "rain sun tomorrow", rowcall.SearchFilter{Limit: 3})
	if len(hits) == 0 || hits[0].Row.Key != "WX_FORECAST" {
		t.Fatalf("unscoped: %v", keys(hits))
	}
	// Disabled: gone from ask, still there for All.
	r, _ := f.store.Lookup(ctx, "WX_FORECAST")
	r.Enabled = 0
	if _, err := f.store.Replace(ctx, r, 0); err != nil {
		t.Fatal(err)
	}
	f.table.Touch()
	hits, _ = f.rank.Search(ctx, "rain sun tomorrow", rowcall.SearchFilter{Limit: 3})
	if slices.Contains(keys(hits), "WX_FORECAST") {
		t.Errorf("a disabled row is found: %v", keys(hits))
	}
	hits, _ = f.rank.Search(ctx, "rain sun tomorrow", rowcall.SearchFilter{Limit: 3, All: true})
	if !slices.Contains(keys(hits), "WX_FORECAST") {
		t.Errorf("All does not find the disabled row: %v", keys(hits))
	}
}

// TestIndexerFollowsWrites: every row is embedded once; a changed row is
// embedded again, an unchanged one not; a deleted row's vector goes; a new
// model embeds everything.
func TestIndexerFollowsWrites(t *testing.T) {
	ctx := context.Background()
	store := seed(t)
	f := newFixture(t, store, "m1")
	f.pass(t)
	if n := f.emb.calls.Load(); n != 4 {
		t.Fatalf("first pass embedded %d rows, want 4", n)
	}
	f.pass(t)
	if n := f.emb.calls.Load(); n != 4 {
		t.Fatalf("a pass with nothing changed embedded %d more", n-4)
	}
	r, _ := store.Lookup(ctx, "MAIL_SEND")
	r.Content = "# WHAT: post a parcel"
	store.Replace(ctx, r, 0)
	r, _ = store.Lookup(ctx, "PAY_LINK")
	r.PlannerRank = 7 // not the embedded text
	store.Replace(ctx, r, 0)
	store.Delete(ctx, "PAY_REFUND", 0, "")
	f.pass(t)
	if n := f.emb.calls.Load(); n != 5 {
		t.Errorf("after one text change %d rows embedded in all, want 5", n)
	}
	vs, _ := store.Vectors(ctx, f.emb.Model(), nil)
	var got []string
	for _, v := range vs {
		got = append(got, v.Key)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"MAIL_SEND", "PAY_LINK", "WX_FORECAST"}) {
		t.Errorf("stored vectors %v", got)
	}
	g := newFixture(t, store, "m2") // another model on the same database
	g.pass(t)
	if n := g.emb.calls.Load(); n != 3 {
		t.Errorf("a new model embedded %d rows, want all 3", n)
	}
}

// TestTableSeesAnotherHost: two hosts on one database, each with its own
// in-memory index; what one embeds, deletes or disables, the other's next
// ask sees (the event log moved).
func TestTableSeesAnotherHost(t *testing.T) {
	ctx := context.Background()
	store := seed(t)
	a := newFixture(t, store, "m1")
	b := newFixture(t, sqlstore.New(store.DB), "m1")
	b.emb = a.emb
	q, _ := a.emb.Embed(ctx, []string{"rain sun tomorrow"})
	if near, _ := b.table.Nearest(ctx, a.emb.Model(), q[0], 1, rowcall.VectorFilter{}); len(near) != 0 {
		t.Fatalf("b found %v before anything was embedded", near)
	}
	a.pass(t)
	near, _ := b.table.Nearest(ctx, a.emb.Model(), q[0], 1, rowcall.VectorFilter{})
	if len(near) != 1 || near[0].Key != "WX_FORECAST" {
		t.Fatalf("b does not see a's vectors: %v", near)
	}
	r, _ := store.Lookup(ctx, "WX_FORECAST")
	r.PlannerVisible = 0
	store.Replace(ctx, r, 0)
	if near, _ := b.table.Nearest(ctx, a.emb.Model(), q[0], 1, rowcall.VectorFilter{}); len(near) == 1 && near[0].Key == "WX_FORECAST" {
		t.Error("b still finds a hidden row")
	}
	store.Delete(ctx, "WX_FORECAST", 0, "")
	if near, _ := b.table.Nearest(ctx, a.emb.Model(), q[0], 4, rowcall.VectorFilter{All: true}); slices.ContainsFunc(near, func(h rowcall.VectorHit) bool { return h.Key == "WX_FORECAST" }) {
		t.Error("b still finds a deleted row")
	}
}

// TestSimilar: a near copy is reported above the threshold, an unrelated row
// is not, and the row itself never is.
func TestSimilar(t *testing.T) {
	ctx := context.Background()
	store := seed(t)
	f := newFixture(t, store, "m1")
	f.pass(t)
	cp := row("PAY_GIVE_BACK", "payments", "return money to a buyer.")
	v, err := current(ctx, f.idx, &cp)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.rank.Similar(ctx, v, cp.Key, rowcall.SearchFilter{}, 5, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Key != "PAY_REFUND" {
		t.Errorf("similar to a copy of PAY_REFUND: %v", got)
	}
	other := row("PAY_REFUND", "payments", "return money to a buyer")
	v, _ = current(ctx, f.idx, &other)
	got, _ = f.rank.Similar(ctx, v, other.Key, rowcall.SearchFilter{}, 5, 0.9)
	if len(got) != 0 {
		t.Errorf("PAY_REFUND is similar to %v (itself left out, no other copy)", got)
	}
	got, _ = f.rank.Similar(ctx, v, other.Key, rowcall.SearchFilter{Scope: &rowcall.Scope{Categories: []string{"email"}}}, 5, -1)
	for _, h := range got {
		if h.Key != "MAIL_SEND" {
			t.Errorf("a scoped neighbour list holds %s", h.Key)
		}
	}
}

// reverse is a stand-in Reranker: it reverses what it is given.
type reverse struct{ got int }

func (r *reverse) Rerank(_ context.Context, _ string, hits []rowcall.Hit, _ rowcall.Asker) ([]rowcall.Hit, error) {
	r.got = len(hits)
	out := slices.Clone(hits)
	slices.Reverse(out)
	return out, nil
}

// TestUnembeddedRowsRankByWords: a row written after the last pass has no
// vector yet, and ask still finds it by its words; a Reranker reorders the
// best candidates only.
func TestUnembeddedRowsRankByWords(t *testing.T) {
	ctx := context.Background()
	store := seed(t)
	f := newFixture(t, store, "m1")
	f.pass(t)
	if err := store.Upsert(ctx, []rowcall.Row{row("ZEBRA_COUNT", "zoo", "count zebras in a warehouse")}); err != nil {
		t.Fatal(err)
	}
	hits, err := f.rank.Search(ctx, "zebras warehouse", rowcall.SearchFilter{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Row.Key != "ZEBRA_COUNT" || hits[0].Row.Type == "" {
		t.Fatalf("a row not yet embedded: %v", keys(hits))
	}
	rr := &reverse{}
	f.rank.Reranker = rr
	all, _ := f.rank.Search(ctx, "return money buyer card payment", rowcall.SearchFilter{Limit: 10, For: &rowcall.Asker{Owner: true}})
	if rr.got != min(vectors.RerankDepth, len(all)) || len(all) < 2 {
		t.Fatalf("the reranker got %d of %d hits", rr.got, len(all))
	}
	f.rank.Reranker = nil
	plain, _ := f.rank.Search(ctx, "return money buyer card payment", rowcall.SearchFilter{Limit: 10})
	want := keys(plain)
	slices.Reverse(want)
	if !slices.Equal(keys(all), want) {
		t.Errorf("reranked %v, plain reversed %v", keys(all), want)
	}
}

// BenchmarkNearest is one query against n random 512-d vectors in Memory
// (the scan and the top 100), at the two sizes.
//
//	go test ./internal/vectors -run xxx -bench Nearest
func BenchmarkNearest(b *testing.B) {
	m := rowcall.EmbedModel{Provider: "bench", Name: "random", Dim: 512}
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			vs := make([]rowcall.Vector, n)
			for i := range vs {
				v := make([]float32, m.Dim)
				for j := range v {
					v[j] = float32(r.NormFloat64())
				}
				vs[i] = rowcall.Vector{Key: fmt.Sprint("K", i), Values: v, Enabled: true, Visible: true}
			}
			mem := vectors.NewMemory()
			mem.Upsert(context.Background(), m, vs)
			q := vs[0].Values
			b.ResetTimer()
			for range b.N {
				if _, err := mem.Nearest(context.Background(), m, q, vectors.K, rowcall.VectorFilter{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNearestScoped is BenchmarkNearest's query at 10,000 rows for a
// token scoped by 10 or 100 keys (and a category no row has): the index
// checks the scope of every row the scan passes, since the scope's best k
// never fill.
//
//	go test ./internal/vectors -run xxx -bench NearestScoped
func BenchmarkNearestScoped(b *testing.B) {
	m := rowcall.EmbedModel{Provider: "bench", Name: "random", Dim: 512}
	r := rand.New(rand.NewPCG(1, 2))
	vs := make([]rowcall.Vector, 10_000)
	for i := range vs {
		v := make([]float32, m.Dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vs[i] = rowcall.Vector{Key: fmt.Sprint("K", i), Values: v, Category: "misc", Enabled: true, Visible: true}
	}
	mem := vectors.NewMemory()
	mem.Upsert(context.Background(), m, vs)
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprint(n, "keys"), func(b *testing.B) {
			scope := &rowcall.Scope{Categories: []string{"mine"}}
			for i := range n {
				scope.Keys = append(scope.Keys, fmt.Sprint("K", i*997%len(vs)))
			}
			for range b.N {
				hits, err := mem.Nearest(context.Background(), m, vs[0].Values, vectors.K, rowcall.VectorFilter{Scope: scope})
				if err != nil || len(hits) != min(n, vectors.K) {
					b.Fatal(len(hits), err)
				}
			}
		})
	}
}

// current returns r's vector the way a write does: begun, waited for, kept.
func current(ctx context.Context, x *vectors.Indexer, r *rowcall.Row) ([]float32, error) {
	p := x.Begin(ctx, r)
	v, err := p.Vector(ctx)
	if err == nil {
		<-p.Keep(r)
	} else {
		p.Keep(r)
	}
	return v, err
}

// oneCore records whether each Embed call was marked rowcall.OnOneCore.
type oneCore struct {
	*words
	marked []bool
}

func (o *oneCore) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	o.marked = append(o.marked, rowcall.Cores(ctx) == 1)
	return o.words.Embed(ctx, texts)
}

// TestQueryEmbeddedOnOneCore: ask embeds the query beside the word search,
// so it asks the embedder to keep the query on one core (the embedded
// encoder would otherwise spread it over the cores the word search runs on),
// and ranks as the two sides did one after the other: the row found by both
// first, the row found by meaning alone next.
func TestQueryEmbeddedOnOneCore(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, seed(t), "m1")
	f.pass(t)
	emb := &oneCore{words: f.emb}
	rank := &vectors.Ranker{Words: f.store, Embedder: emb, Index: f.table, Weight: vectors.Weight}
	hits, err := rank.Search(ctx, "return money buyer", rowcall.SearchFilter{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(emb.marked, []bool{true}) {
		t.Errorf("the query's Embed calls were marked one-core: %v, want [true]", emb.marked)
	}
	if got := keys(hits); len(got) == 0 || got[0] != "PAY_REFUND" {
		t.Errorf("hits %v, want PAY_REFUND first", got)
	}
}

// crowded is a store where 30 rows of category crowd mean exactly what the
// query does and the two of category mine less: a caller scoped to mine
// finds its rows only below every crowd row.
func crowded(t *testing.T) (*fixture, []float32) {
	ctx := context.Background()
	store := sqlstore.New(testdb.Open(t))
	var rows []rowcall.Row
	for i := range 30 {
		rows = append(rows, row(fmt.Sprintf("CROWD_%02d", i), "crowd", "return money to a buyer"))
	}
	rows = append(rows, row("MINE_SELLER", "mine", "return money to a seller"), row("MINE_MONEY", "mine", "money"))
	if err := store.Upsert(ctx, rows); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, store, "m1")
	f.pass(t)
	q, _ := f.emb.Embed(ctx, []string{"return money to a buyer"})
	return f, q[0]
}

// noWords is a store whose word search finds nothing: the ranking's
// candidates are the vector side's alone.
type noWords struct{ *sqlstore.Store }

func (noWords) Search(context.Context, string, rowcall.SearchFilter) ([]rowcall.Hit, error) {
	return nil, nil
}

// TestScopedNeighboursAreTheScopesBest: a token's neighbour list and ask's
// vector side hold the best rows in its scope however many rows outside it
// rank above them (the index filters while it scans, not after a top few).
func TestScopedNeighboursAreTheScopesBest(t *testing.T) {
	ctx := context.Background()
	f, q := crowded(t)
	for _, c := range []struct {
		scope *rowcall.Scope
		want  []string
	}{
		{&rowcall.Scope{Categories: []string{"mine"}}, []string{"MINE_SELLER", "MINE_MONEY"}},
		{&rowcall.Scope{Keys: []string{"MINE_MONEY"}}, []string{"MINE_MONEY"}},
		{&rowcall.Scope{Keys: []string{"MINE_MONEY", "CROWD_07"}, Categories: []string{"mine"}}, []string{"CROWD_07", "MINE_SELLER"}},
	} {
		got, err := f.rank.Similar(ctx, q, "CROWD_00", rowcall.SearchFilter{Scope: c.scope}, 2, -1)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, h := range got {
			keys = append(keys, h.Key)
		}
		if !slices.Equal(keys, c.want) {
			t.Errorf("similar within %v %v: %v, want %v", c.scope.Keys, c.scope.Categories, keys, c.want)
		}
	}
	// The row itself is left out, not one of the n.
	got, _ := f.rank.Similar(ctx, q, "CROWD_00", rowcall.SearchFilter{}, 3, -1)
	if len(got) != 3 || slices.ContainsFunc(got, func(h rowcall.VectorHit) bool { return h.Key == "CROWD_00" }) {
		t.Errorf("unscoped similar: %v", got)
	}
	r := &vectors.Ranker{Words: noWords{f.store}, Embedder: f.emb, Index: f.table, Weight: vectors.Weight, K: 5}
	hits, err := r.Search(ctx, "return money to a buyer", rowcall.SearchFilter{Scope: &rowcall.Scope{Categories: []string{"mine"}}, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys(hits), []string{"MINE_SELLER", "MINE_MONEY"}) {
		t.Errorf("scoped ask by vectors: %v", keys(hits))
	}
}

// heldText is the test embedder that holds the embedding of one text until
// let is closed, telling held once it is under way.
type heldText struct {
	*words
	text      string
	held, let chan struct{}
}

func (h *heldText) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if slices.Contains(texts, h.text) {
		close(h.held)
		<-h.let
	}
	return h.words.Embed(ctx, texts)
}

// readRows is a store that tells read once the queue's pass read the rows.
type readRows struct {
	*sqlstore.Store
	read chan struct{}
}

func (s readRows) AllRows(ctx context.Context, scope *rowcall.Scope, all bool) ([]rowcall.Row, error) {
	rows, err := s.Store.AllRows(ctx, scope, all)
	close(s.read)
	return rows, err
}

// TestOldTextNeverOverwritesTheNewVector: the queue's pass reads a row, a
// write then changes its text and stores the new text's vector (the write
// held the key while it embedded, so the pass waits or embeds after); the
// pass's embedding of the old text, ending last, does not replace it.
func TestOldTextNeverOverwritesTheNewVector(t *testing.T) {
	ctx := context.Background()
	store := sqlstore.New(testdb.Open(t))
	old := row("PAY_REFUND", "payments", "return money to a buyer")
	if err := store.Upsert(ctx, []rowcall.Row{old}); err != nil {
		t.Fatal(err)
	}
	cur, _ := store.Lookup(ctx, old.Key)
	next := cur
	next.Content = "# WHAT: send a letter to an inbox\n# WHEN_TO_USE: send a letter to an inbox"
	emb := &heldText{words: &words{name: "m1"}, text: rowcall.EmbedText(&next), held: make(chan struct{}), let: make(chan struct{})}
	table := vectors.NewTable(store, 0)
	read := readRows{store, make(chan struct{})}
	x := &vectors.Indexer{Embedder: emb, Index: table, Store: read}

	p := x.Begin(ctx, &next) // the write's own embedding, the key held
	<-emb.held
	passed := make(chan error)
	go func() { passed <- x.Pass(ctx) }()
	<-read.read // the pass holds the row at its old text
	committed, err := store.Replace(ctx, next, cur.Version)
	if err != nil {
		t.Fatal(err)
	}
	close(emb.let)
	<-p.Keep(&committed)
	if err := <-passed; err != nil {
		t.Fatal(err)
	}
	m := emb.Model()
	want := rowcall.EmbedHash(m, rowcall.EmbedText(&committed))
	vs, err := store.Vectors(ctx, m, []string{old.Key})
	if err != nil || len(vs) != 1 {
		t.Fatalf("vectors %v %v", vs, err)
	}
	if vs[0].TextHash != want {
		t.Error("the table holds the old text's vector after the new text's was stored")
	}
	if _, h, _ := table.Peek(m, old.Key); h != want {
		t.Error("the index holds the old text's vector after the new text's was stored")
	}
}

// dimLater is an embedder that learns its dimension from its first answer,
// as a provider's does when none is configured (internal/embed/openai):
// Model's Dim is 0 until then.
type dimLater struct {
	words
	known atomic.Bool
}

func (d *dimLater) Model() rowcall.EmbedModel {
	m := d.words.Model()
	if !d.known.Load() {
		m.Dim = 0
	}
	return m
}

func (d *dimLater) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := d.words.Embed(ctx, texts)
	d.known.Store(true)
	return vs, err
}

// TestVectorsOfTheFirstAnswerAreFound: the vectors an embedder makes before
// it knows its dimension (the queue's first batch, a write's vector) are
// stored under the model it reports once it answered, so ask finds them. The
// queue's first batch used to be stored under a model of dimension 0, which
// no ask looks in: a provider-embedded host ranked those rows by words alone
// until something embedded them again.
func TestVectorsOfTheFirstAnswerAreFound(t *testing.T) {
	ctx := context.Background()
	store := seed(t)
	emb := &dimLater{words: words{name: "later"}}
	table := vectors.NewTable(store, 0)
	idx := &vectors.Indexer{Embedder: emb, Index: table, Store: store}
	if err := idx.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	written := row("SMS_SEND", "sms", "text a phone a short message")
	if err := store.Upsert(ctx, []rowcall.Row{written}); err != nil {
		t.Fatal(err)
	}
	fresh := &dimLater{words: words{name: "later2"}}
	begun := (&vectors.Indexer{Embedder: fresh, Index: table, Store: store}).Begin(ctx, &written)
	<-begun.Keep(&written)
	for _, e := range []rowcall.Embedder{emb, fresh} {
		vs, err := store.Vectors(ctx, e.Model(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range vs {
			got = append(got, v.Key)
		}
		slices.Sort(got)
		want := []string{"MAIL_SEND", "PAY_LINK", "PAY_REFUND", "WX_FORECAST"}
		if e == rowcall.Embedder(fresh) {
			want = []string{"SMS_SEND"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("vectors stored under %s: %v, want %v", e.Model().ID(), got, want)
		}
	}
	r := &vectors.Ranker{Words: noWords{store}, Embedder: emb, Index: table, Weight: vectors.Weight}
	hits, err := r.Search(ctx, "rain sun tomorrow", rowcall.SearchFilter{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Row.Key != "WX_FORECAST" {
		t.Fatalf("ask by meaning alone: %v, want WX_FORECAST first", keys(hits))
	}
	// A restarted host's first pass finds those vectors current: it embeds
	// one text to learn the dimension, and none of the rows again.
	again := &dimLater{words: words{name: "later"}}
	if err := (&vectors.Indexer{Embedder: again, Index: vectors.NewTable(store, 0), Store: store}).Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if n := again.calls.Load(); n != 2 { // the probe, and SMS_SEND (embedded under the other model)
		t.Errorf("a restart's first pass embedded %d texts, want 2", n)
	}
}

// A model's questions for a row whose text is a hostile server's do not make
// it the top answer for a question another row's own text matches: the
// question the model wrote word for word brings the row into the hits, after
// the row whose text matched; once the owner approves the question, it ranks
// as a taught phrase does.
func TestModelWrittenPhrasesDoNotOutrankOwnText(t *testing.T) {
	ctx := context.Background()
	store := seed(t)
	if err := store.Upsert(ctx, []rowcall.Row{row("PAY_SUPPLIER", "payments", "pay an invoice of a supplier from the company account")}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, store, "m1")
	f.pass(t)
	l := &learn.Learner{Store: store, Embedder: f.emb}
	f.rank.Learned = l
	const q = "pay my supplier invoice"
	if err := l.TeachSet(ctx, []rowcall.Phrase{{Key: "WX_FORECAST", Scope: "*", Text: q, Source: rowcall.SourceModel, Actor: "model:ASK_EXPAND", Receipt: "inv_x"}}); err != nil {
		t.Fatal(err)
	}
	for _, sf := range []rowcall.SearchFilter{{Limit: 5}, {Limit: 5, Near: true, Scope: &rowcall.Scope{Categories: []string{"payments", "weather"}}}} {
		hits, err := f.rank.Search(ctx, q, sf)
		if err != nil {
			t.Fatal(err)
		}
		if got := keys(hits); len(got) < 2 || got[0] != "PAY_SUPPLIER" || !slices.Contains(got, "WX_FORECAST") {
			t.Fatalf("scope %v: %v, want PAY_SUPPLIER first and WX_FORECAST among the hits", sf.Scope, got)
		}
	}
	ps, err := l.Phrases(ctx, "WX_FORECAST")
	if err != nil || len(ps) != 1 {
		t.Fatalf("%v %v", ps, err)
	}
	if err := l.Edit(ctx, ps[0].ID, nil, ptr(true)); err != nil {
		t.Fatal(err)
	}
	hits, err := f.rank.Search(ctx, q, rowcall.SearchFilter{Limit: 5})
	if err != nil || len(hits) == 0 || hits[0].Row.Key != "WX_FORECAST" {
		t.Fatalf("the owner's approved question does not lift its row: %v %v", keys(hits), err)
	}
}

func ptr[T any](v T) *T { return &v }
