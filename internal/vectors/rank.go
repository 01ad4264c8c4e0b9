package vectors

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"

	"github.com/rowcall/rowcall"
)

// The hybrid settings, chosen on the dev set's tune split (test/askeval;
// docs/benchmarks.md, "Ask"): the words' share of the mix,
// and how many candidates each side gives it.
const (
	Weight = 0.15
	K      = 100
	// RerankDepth is how many of the best candidates a Reranker reorders.
	RerankDepth = 20
	// Floor and WordsFloor are the shares of the best hit's score under
	// which a search with SearchFilter.Near drops a hit, for the hybrid mix
	// and for words alone (bm25/best). Chosen on the dev set's tune split
	// (docs/benchmarks.md, "Ask"): no right row ranked in
	// the top 3 scored under 0.80 of its best by the mix, nor under 0.50 by
	// words alone.
	Floor      = 0.75
	WordsFloor = 0.45
	// NearKeep is how many of the best hits a search with SearchFilter.Near
	// keeps whatever their scores: the ranking is seldom confident enough
	// against its second and third hits to leave them out (docs/RATIONALE.md,
	// "Why does ask keep its best three?").
	NearKeep = 3
	// KeepFloor is the share of the best score the best NearKeep hits must
	// reach to be kept under Floor: a hit far under the best is one the
	// ranking is confident against (docs/RATIONALE.md, "Why does ask keep
	// its best three?").
	KeepFloor = 0.5
	// Hub is how much of a row's likeness to the directory's centroid the
	// hosts take off its cosine: none; it was measured on every dev set and
	// lost on two test halves (docs/RATIONALE.md, "Why is a row's likeness to
	// every row not taken off its cosine?"; docs/benchmarks.md, "Ask").
	Hub = 0
)

// near is hits without those that score under floor × the best score,
// except that the best NearKeep are kept down to KeepFloor × the best (the
// order is kept).
func near(hits []rowcall.Hit, floor float64) []rowcall.Hit {
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Score)
	}
	if best <= 0 {
		return hits
	}
	out := hits[:0:0]
	for i, h := range hits {
		if h.Score >= floor*best || (i < NearKeep && h.Score >= min(floor, KeepFloor)*best) {
			out = append(out, h)
		}
	}
	return out
}

// Words is the word search under the ranking, and where vector hits' rows
// are read from. sqlstore.Store implements it.
type Words interface {
	Search(ctx context.Context, query string, f rowcall.SearchFilter) ([]rowcall.Hit, error)
	RowsByKey(ctx context.Context, keys []string) (map[string]rowcall.Row, error)
}

// Ranker is the one ranking of rows for plain words on every host: ask,
// did_you_mean and MCP's search_capabilities all call its Search. Without an
// Embedder and an Index it is word search (scores rescaled, below); with
// them it fuses word hits and vector hits linearly (Fuse), then lets the
// Reranker, if any, reorder the best RerankDepth of a search made for
// someone (SearchFilter.For; did_you_mean's is not).
//
// A hit's Score is higher-is-better: Weight × bm25/best + (1 − Weight) ×
// cosine, where bm25/best is the word hit's bm25 over the best word hit's (1
// for the best, 0 for a row words did not find) and cosine is the query's
// with the row's vector (estimated for a row not yet embedded, which so
// still ranks by its words: Fuse says how). Words only, it is bm25/best.
//
// Vector hits pass the same filter as word hits (Visible): enabled and
// planner-visible unless All, and in the token's Scope.
type Ranker struct {
	Words    Words
	Embedder rowcall.Embedder    // nil: words only
	Index    rowcall.VectorIndex // nil: words only
	Reranker rowcall.Reranker    // nil: no rerank
	Weight   float64             // the words' share, 0 to 1 (the hosts': Weight)
	K        int                 // candidates from each side; K when 0
	Hub      float64             // the share of a row's likeness to the directory's centroid taken off its cosine, when Index is a Centroider (the hosts': Hub); 0 none
	Learned  Learned             // what ask learned from use (internal/learn); nil: nothing
}

// Learned is what ask learned from use (internal/learn.Learner): the rows
// whose learned phrases, under the search's scope, are near a question, and
// the asks it learns from.
type Learned interface {
	// Cosines is, for each row with a phrase learned under f.Scope, how
	// near the question's vector q its phrases are (taught: the hybrid takes
	// it for the row's cosine when it is higher than the row's own), and,
	// for each row with unconfirmed phrases a model wrote, how near those
	// are (written: ranked by Written).
	Cosines(ctx context.Context, m rowcall.EmbedModel, q []float32, f rowcall.SearchFilter) (taught, written map[string]float64, err error)
	// Asked is told of each search made for someone (f.For) and its hits.
	Asked(ctx context.Context, query string, f rowcall.SearchFilter, hits []rowcall.Hit)
}

func (r *Ranker) k() int {
	if r.K > 0 {
		return r.K
	}
	return K
}

// Search ranks rows for query within f (f.Limit: 10 when 0, at most 100).
// A query past an ask's bounds is refused (rowcall.CheckAsk): every ask,
// through the API, MCP or the CLI, is ranked here.
// With f.Near it leaves out hits scoring under Floor × the best (WordsFloor
// when it ranked by words alone): a caller acts on the best few, and a row
// far below them is noise in the answer.
//
// Rows are read only for the hits the answer (and the rerank) keeps. The
// query's embedding and the vector scan run on a goroutine of their own
// beside the word search, kept on one core (rowcall.OnOneCore): a short
// query gains little from a parallel matrix product, and the two sides
// spreading over the same cores made the overlap slower than running them
// in turn (docs/benchmarks.md, "Ask"; commit 394f38a).
func (r *Ranker) Search(ctx context.Context, query string, f rowcall.SearchFilter) ([]rowcall.Hit, error) {
	if err := rowcall.CheckAsk(query); err != nil { // before anything is searched or embedded
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, 100)
	hybrid := r.Embedder != nil && r.Index != nil && strings.TrimSpace(query) != ""
	wf := f
	var vecs chan nearest
	if hybrid {
		wf.Limit = r.k() // the fusion's candidates; words alone need only the limit
		vecs = make(chan nearest, 1)
		go func() { vecs <- r.nearest(rowcall.OnOneCore(ctx), query, f) }()
	}
	words, err := r.Words.Search(ctx, query, wf)
	var vs nearest
	if hybrid {
		vs = <-vecs // the goroutine ends before Search returns
	}
	if err != nil {
		return nil, err
	}
	hits, floor := Fuse(words, nil, 1), WordsFloor
	if hybrid {
		if vs.err == nil {
			vs.err = r.fuse(ctx, &vs, words)
		}
		if vs.err == nil {
			hits, floor = vs.fused, Floor
		} else if !errors.Is(vs.err, ErrNotReady) {
			slog.Warn("vectors: ranking by words only", "err", vs.err)
		}
	}
	rerank := r.Reranker != nil && f.For != nil
	need := limit
	if rerank {
		need = max(need, RerankDepth)
	}
	hits, err = r.rows(ctx, hits, f, need)
	if err != nil {
		return nil, err
	}
	if rerank && len(hits) > 1 {
		n := min(RerankDepth, len(hits))
		top, err := r.Reranker.Rerank(ctx, query, hits[:n], *f.For)
		if err != nil {
			slog.Warn("vectors: rerank failed; keeping the hybrid order", "err", err)
		} else {
			hits = append(top, hits[n:]...)
		}
	}
	hits = hits[:min(limit, len(hits))]
	if f.Near {
		hits = near(hits, floor)
	}
	if r.Learned != nil && f.For != nil {
		r.Learned.Asked(ctx, query, f, hits)
	}
	return hits, nil
}

// nearest is the vector side of a hybrid search: the query's vector and
// the index's nearest rows to it, then (fuse) the fusion with the word hits.
type nearest struct {
	qv      []float32
	hits    []rowcall.VectorHit
	learned map[string]float64 // Learned's cosines: taught
	written map[string]float64 // and written by a model, unconfirmed
	fused   []rowcall.Hit
	err     error
}

// nearest embeds query and finds the index's nearest K rows to it.
func (r *Ranker) nearest(ctx context.Context, query string, f rowcall.SearchFilter) (n nearest) {
	qvs, err := r.Embedder.Embed(ctx, []string{query})
	if err != nil {
		return nearest{err: err}
	}
	if len(qvs) != 1 {
		return nearest{err: errors.New("vectors: the embedder returned no vector for the query")}
	}
	n.qv = qvs[0]
	if r.Learned != nil {
		if n.learned, n.written, err = r.Learned.Cosines(ctx, r.Embedder.Model(), n.qv, f); err != nil {
			slog.Warn("vectors: ranking without learned phrases", "err", err)
		}
	}
	if c, ok := r.Index.(Centroider); ok && r.Hub > 0 {
		if g := c.Centroid(r.Embedder.Model()); g != nil {
			n.qv = unhub(n.qv, g, r.Hub)
		}
	}
	n.hits, n.err = r.Index.Nearest(ctx, r.Embedder.Model(), n.qv, r.k(), rowcall.VectorFilter{All: f.All, Scope: f.Scope})
	return n
}

// fuse sets n.fused to words and n's vector hits, fused.
func (r *Ranker) fuse(ctx context.Context, n *nearest, words []rowcall.Hit) error {
	near := n.hits
	// A word hit outside the vector side's best K still has a cosine.
	if s, ok := r.Index.(Scorer); ok {
		seen := map[string]bool{}
		for _, h := range near {
			seen[h.Key] = true
		}
		var keys []string
		for _, h := range words {
			if !seen[h.Row.Key] {
				keys = append(keys, h.Row.Key)
			}
		}
		if len(keys) > 0 {
			cos, err := s.Scores(ctx, r.Embedder.Model(), n.qv, keys)
			if err != nil {
				return err
			}
			for _, k := range keys {
				if c, ok := cos[k]; ok {
					near = append(near, rowcall.VectorHit{Key: k, Cosine: c})
				}
			}
		}
	}
	// A row's learned phrases stand for it when nearer than its own text.
	if len(n.learned) > 0 {
		at := make(map[string]int, len(near))
		for i, h := range near {
			at[h.Key] = i
		}
		for k, c := range n.learned {
			if i, ok := at[k]; !ok {
				near = append(near, rowcall.VectorHit{Key: k, Cosine: c})
			} else if c > near[i].Cosine {
				near[i].Cosine = c
			}
		}
	}
	n.fused = Fuse(words, near, r.Weight)
	if len(n.written) > 0 {
		n.fused = Written(n.fused, words, near, n.written, r.Weight)
	}
	return nil
}

// Written ranks fused, the hits Fuse made of words and near (their own
// text, and phrases taught under the search's scope), with the unconfirmed
// phrases a model wrote (written: a row's best cosine with one, without
// Lift). A row whose written phrase is nearer than its own cosine scores as
// if that were its cosine, but never above the best score another row has
// of its own: a model's phrase can bring its row into the hits and up to the
// best own match, never past it, and at an equal score the row matched by
// its own text goes first (docs/finding.md, "Questions written by a model";
// docs/RATIONALE.md). So text a model wrote from a row's description, which
// may be a hostile server's, ranks the row no higher than its description
// could by itself ranked another row's.
func Written(fused, words []rowcall.Hit, near []rowcall.VectorHit, written map[string]float64, weight float64) []rowcall.Hit {
	cos := make(map[string]float64, len(near))
	for _, h := range near {
		cos[h.Key] = h.Cosine
	}
	var raised []rowcall.VectorHit
	for k, c := range written {
		if c > cos[k] {
			raised = append(raised, rowcall.VectorHit{Key: k, Cosine: c})
		}
	}
	if len(raised) == 0 {
		return fused
	}
	// The two best own scores: the best of another row's is the first, or
	// the second for the first's own row.
	var top [2]rowcall.Hit
	for _, h := range fused {
		if h.Score > top[0].Score || top[0].Row.Key == "" {
			top[0], top[1] = h, top[0]
		} else if h.Score > top[1].Score || top[1].Row.Key == "" {
			top[1] = h
		}
	}
	with := map[string]float64{} // a raised row's score with its phrase for its cosine
	for _, h := range Fuse(words, append(slices.Clone(near), raised...), weight) {
		with[h.Row.Key] = h.Score
	}
	at := make(map[string]int, len(fused))
	for i, h := range fused {
		at[h.Row.Key] = i
	}
	lifted := map[string]bool{}
	for _, v := range raised {
		other := top[0]
		if other.Row.Key == v.Key {
			other = top[1]
		}
		i, ok := at[v.Key]
		if !ok {
			i = len(fused)
			at[v.Key] = i
			fused = append(fused, rowcall.Hit{Row: rowcall.Row{Key: v.Key}})
		}
		if s := min(with[v.Key], other.Score); s > fused[i].Score {
			fused[i].Score, lifted[v.Key] = s, true
		}
	}
	sortHits(fused, lifted)
	return fused
}

// sortHits orders hits best first; at an equal score a hit whose key last
// holds goes after one whose does not, then by key.
func sortHits(hits []rowcall.Hit, last map[string]bool) {
	slices.SortStableFunc(hits, func(a, b rowcall.Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case last[a.Row.Key] != last[b.Row.Key]:
			if last[a.Row.Key] {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Row.Key, b.Row.Key)
	})
}

// rows returns the best need of hits (best first) that the filter passes,
// reading the rows of those that words did not find (vector hits) and
// leaving out those the filter does not pass, or that are gone. It reads
// rows only as far down hits as it must.
func (r *Ranker) rows(ctx context.Context, hits []rowcall.Hit, f rowcall.SearchFilter, need int) ([]rowcall.Hit, error) {
	out := make([]rowcall.Hit, 0, min(need, len(hits)))
	for i := 0; i < len(hits) && len(out) < need; {
		// Each hit gives at most one: read twice what is missing, in case
		// some are filtered out.
		batch := hits[i:min(len(hits), i+2*(need-len(out)))]
		i += len(batch)
		var keys []string
		for _, h := range batch {
			if h.Row.Type == "" {
				keys = append(keys, h.Row.Key)
			}
		}
		var byKey map[string]rowcall.Row
		if len(keys) > 0 {
			var err error
			if byKey, err = r.Words.RowsByKey(ctx, keys); err != nil {
				return nil, err
			}
		}
		for _, h := range batch {
			if h.Row.Type == "" {
				row, ok := byKey[h.Row.Key]
				if !ok || !Visible(&row, f) {
					continue
				}
				h.Row = row
			}
			if len(out) < need {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// Visible is the filter every hit passes, word or vector: enabled and
// planner-visible unless f.All, and in f.Scope.
func Visible(row *rowcall.Row, f rowcall.SearchFilter) bool {
	return (f.All || (row.Enabled != 0 && row.PlannerVisible != 0)) && f.Scope.Covers(row)
}

// Fuse mixes word hits (bm25, lower is better) and vector hits (cosine)
// linearly: each candidate — the union of both — scores weight × bm25/best +
// (1 − weight) × cosine, best first, ties by key. A word hit that vecs gives
// no cosine (a row not embedded yet) is scored as if its cosine were
// bm25/best × the best cosine in vecs, so it still ranks by its words. A
// vector hit's Hit has only its Key set (Ranker reads its row). With weight 1
// (or no vecs) it is the word order.
func Fuse(words []rowcall.Hit, vecs []rowcall.VectorHit, weight float64) []rowcall.Hit {
	best := 0.0
	for _, h := range words {
		best = min(best, h.Score)
	}
	byKey := map[string]int{}
	out := make([]rowcall.Hit, 0, len(words)+len(vecs))
	var ws []float64 // the word hits' bm25/best
	for _, h := range words {
		if _, dup := byKey[h.Row.Key]; dup {
			continue
		}
		w := 0.0
		if best < 0 {
			w = h.Score / best
		}
		byKey[h.Row.Key] = len(out)
		h.Score = weight * w
		out = append(out, h)
		ws = append(ws, w)
	}
	if weight < 1 && len(vecs) > 0 {
		nwords, bestCos := len(out), 0.0
		scored := make([]bool, nwords)
		for _, v := range vecs {
			bestCos = max(bestCos, v.Cosine)
			i, ok := byKey[v.Key]
			if !ok {
				i = len(out)
				byKey[v.Key] = i
				out = append(out, rowcall.Hit{Row: rowcall.Row{Key: v.Key}})
			} else if i < nwords {
				scored[i] = true
			}
			out[i].Score += (1 - weight) * v.Cosine
		}
		// A word hit without a cosine (not embedded yet) ranks by its words:
		// its cosine is taken as bm25/best × the best vector hit's.
		for i := range nwords {
			if !scored[i] {
				out[i].Score += (1 - weight) * ws[i] * bestCos
			}
		}
	}
	sortHits(out, nil)
	return out
}

// Similar returns up to n rows nearest the vector v (a row's, whose own key
// self is left out) with cosine at least atLeast, that f lets the caller see,
// best first. The index applies f while it searches, so rows the caller may
// not see, however many rank above, take none of the n places.
func (r *Ranker) Similar(ctx context.Context, v []float32, self string, f rowcall.SearchFilter, n int, atLeast float64) ([]rowcall.VectorHit, error) {
	if r.Embedder == nil || r.Index == nil {
		return nil, errors.New("vectors: no embedder")
	}
	near, err := r.Index.Nearest(ctx, r.Embedder.Model(), v, n, rowcall.VectorFilter{All: f.All, Scope: f.Scope, Except: self})
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, h := range near {
		if h.Cosine >= atLeast {
			keys = append(keys, h.Key)
		}
	}
	if len(keys) == 0 {
		return []rowcall.VectorHit{}, nil
	}
	// The rows as they are now: an index another host writes to may
	// lag a row's delete or change.
	byKey, err := r.Words.RowsByKey(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := []rowcall.VectorHit{}
	for _, h := range near {
		if row, ok := byKey[h.Key]; ok && h.Cosine >= atLeast && Visible(&row, f) {
			out = append(out, h)
		}
	}
	return out, nil
}
