// Command sweep scores variants of the hybrid ranking on the askeval dev
// set's tune split (never the test split): how a row is embedded (its joined
// WHAT and WHEN_TO_USE text as the hosts do, each line alone, or mixes), how
// the word score is normalised, how the cosine is, and the words' weight. It
// recomputes the fusion offline from each tune intent's word hits
// (Store.Search, limit vectors.K) and its cosine with every row (float32,
// where the hosts scan int8 codes), over the same candidates as
// vectors.Ranker (the top vectors.K by cosine and every word hit), and prints
// one line per variant, best top-1 (then MRR@10) first.
//
//	go run ./test/askeval/cmd/sweep [-rows 10000] [-top 40]
//
// docs/benchmarks.md, "Ask", quotes the chosen variant. The variant the hosts run is "joined ratio raw w=0.15".
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/test/askeval"
)

// intent is one tune intent's word hits and cosines.
type intent struct {
	in    askeval.Intent
	bm25  map[int]float64 // row → bm25 (lower is better)
	order []float64       // the word hits' bm25, best first
	cos   map[string][]float32
}

func main() {
	rows := flag.Int("rows", 10_000, "distractor rows")
	top := flag.Int("top", 40, "how many of the best variants to print (0: all)")
	flag.Parse()
	if err := run(*rows, *top); err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(1)
	}
}

func line(r rowcall.Row, label string) string {
	for _, l := range strings.Split(r.Content, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), label); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func dot(a, b []float32) float32 {
	s := float32(0)
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func run(nrows, show int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "askeval-sweep-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rows := askeval.Directory(nrows)
	store, db, err := askeval.NewStore(ctx, dir, rows)
	if err != nil {
		return err
	}
	defer db.Close()
	wdir, err := use.DefaultDir()
	if err != nil {
		return err
	}
	enc, err := use.Open(ctx, wdir)
	if err != nil {
		return err
	}
	cache, err := askeval.VectorCacheDir()
	if err != nil {
		return err
	}
	texts := map[string][]string{}
	for _, r := range rows {
		texts["joined"] = append(texts["joined"], rowcall.EmbedText(&r))
		texts["what"] = append(texts["what"], line(r, "# WHAT:"))
		texts["when"] = append(texts["when"], line(r, "# WHEN_TO_USE:"))
	}
	vecs := map[string][][]float32{}
	for _, k := range []string{"joined", "what", "when"} {
		if vecs[k], err = askeval.EmbedTexts(enc, texts[k], cache, nil); err != nil {
			return err
		}
	}
	// One vector per row: the normalised sum of the three embeddings.
	for i := range rows {
		s := make([]float32, use.Dim)
		for _, k := range []string{"joined", "what", "when"} {
			for j, x := range vecs[k][i] {
				s[j] += x
			}
		}
		n := float32(math.Sqrt(float64(dot(s, s))))
		for j := range s {
			s[j] /= n
		}
		vecs["sum3"] = append(vecs["sum3"], s)
	}
	pos := map[string]int{}
	for i, r := range rows {
		pos[r.Key] = i
	}
	var qs []intent
	for _, in := range askeval.Intents() {
		if in.Split != askeval.Tune {
			continue
		}
		q := intent{in: in, bm25: map[int]float64{}, cos: map[string][]float32{}}
		hits, err := store.Search(ctx, in.Text, rowcall.SearchFilter{Limit: vectors.K})
		if err != nil {
			return err
		}
		for _, h := range hits {
			q.bm25[pos[h.Row.Key]] = h.Score
			q.order = append(q.order, h.Score)
		}
		qv := enc.Embed(in.Text)
		for k, vs := range vecs {
			c := make([]float32, len(rows))
			for i, v := range vs {
				c[i] = dot(qv, v)
			}
			q.cos[k] = c
		}
		qs = append(qs, q)
	}
	// How a row's cosine is taken from its vectors.
	measures := map[string]func(q intent, i int) float32{
		"joined":         func(q intent, i int) float32 { return q.cos["joined"][i] },
		"max(what,when)": func(q intent, i int) float32 { return max(q.cos["what"][i], q.cos["when"][i]) },
		"mix(joined,max)": func(q intent, i int) float32 {
			return 0.5*q.cos["joined"][i] + 0.5*max(q.cos["what"][i], q.cos["when"][i])
		},
		"sum3": func(q intent, i int) float32 { return q.cos["sum3"][i] },
	}
	// How a word hit's bm25 becomes its word score, 0 to 1.
	best := func(q intent) float64 { return q.order[0] }
	words := map[string]func(q intent, bm float64) float64{
		"ratio": func(q intent, bm float64) float64 { return bm / best(q) },
		"spread10": func(q intent, bm float64) float64 {
			if len(q.order) < 10 {
				return bm / best(q)
			}
			return bm / best(q) * (1 - q.order[9]/best(q))
		},
	}
	for _, s := range []float64{4, 8, 12} {
		words[fmt.Sprintf("sat%g", s)] = func(q intent, bm float64) float64 { return -bm / (-bm + s) }
		words[fmt.Sprintf("conf%g", s)] = func(q intent, bm float64) float64 { return bm / best(q) * min(1, -best(q)/s) }
	}
	type figures struct {
		name                          string
		top1, top3, mrr, shared, none float64
	}
	var out []figures
	for mname, m := range measures {
		// Each intent's cosines and candidates under this measure.
		type cand struct {
			cos   []float32
			cands []int
		}
		cs := make([]cand, len(qs))
		for qi, q := range qs {
			c := make([]float32, len(rows))
			for i := range c {
				c[i] = m(q, i)
			}
			cands := vectors.Top(c, vectors.K, nil, nil)
			for i := range q.bm25 {
				if !slices.Contains(cands, i) {
					cands = append(cands, i)
				}
			}
			cs[qi] = cand{c, cands}
		}
		for wname, wf := range words {
			for _, norm := range []string{"raw", "minmax", "z"} {
				weights := []float64{0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5}
				if norm == "z" {
					weights = []float64{0.5, 0.6, 0.7, 0.8, 0.9}
				}
				for _, w := range weights {
					f := figures{name: fmt.Sprintf("%-16s %-8s %-6s w=%.2f", mname, wname, norm, w)}
					for qi, q := range qs {
						r := rank(q, cs[qi].cos, cs[qi].cands, wf, norm, w, rows)
						if r == 1 {
							f.top1++
							if q.in.Kind == askeval.Shared {
								f.shared++
							} else {
								f.none++
							}
						}
						if r >= 1 && r <= 3 {
							f.top3++
						}
						if r > 0 {
							f.mrr += 1 / float64(r)
						}
					}
					n := float64(len(qs))
					f.top1, f.top3, f.mrr, f.shared, f.none = f.top1/n, f.top3/n, f.mrr/n, 2*f.shared/n, 2*f.none/n
					out = append(out, f)
				}
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].top1 != out[b].top1 {
			return out[a].top1 > out[b].top1
		}
		if out[a].mrr != out[b].mrr {
			return out[a].mrr > out[b].mrr
		}
		return out[a].name < out[b].name
	})
	fmt.Printf("%d tune intents, %d rows; top-1 (shared, none), top-3, MRR@10\n", len(qs), len(rows))
	for i, f := range out {
		if show > 0 && i >= show && !strings.HasPrefix(f.name, "joined           ratio    raw    w=0.15") {
			continue
		}
		fmt.Printf("%s  %.3f (%.3f, %.3f)  %.3f  %.3f\n", f.name, f.top1, f.shared, f.none, f.top3, f.mrr)
	}
	return nil
}

// rank is the target's 1-based rank within the first askeval.Depth of the
// candidates scored w × words + (1 − w) × cosine (the cosine normalised over
// the candidates by norm: raw, minmax or z), 0 when absent.
func rank(q intent, cos []float32, cands []int, word func(intent, float64) float64, norm string, w float64, rows []rowcall.Row) int {
	lo, hi, mean, sd := math.Inf(1), math.Inf(-1), 0.0, 0.0
	for _, i := range cands {
		c := float64(cos[i])
		lo, hi, mean = min(lo, c), max(hi, c), mean+c
	}
	mean /= float64(len(cands))
	for _, i := range cands {
		sd += (float64(cos[i]) - mean) * (float64(cos[i]) - mean)
	}
	sd = math.Sqrt(sd / float64(len(cands)))
	type scored struct {
		i int
		s float64
	}
	all := make([]scored, 0, len(cands))
	for _, i := range cands {
		c := float64(cos[i])
		switch norm {
		case "minmax":
			c = (c - lo) / (hi - lo)
		case "z":
			c = (c - mean) / sd
		}
		ws := 0.0
		if bm, ok := q.bm25[i]; ok {
			ws = word(q, bm)
		}
		all = append(all, scored{i, w*ws + (1-w)*c})
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].s != all[b].s {
			return all[a].s > all[b].s
		}
		return rows[all[a].i].Key < rows[all[b].i].Key
	})
	for r := 0; r < askeval.Depth && r < len(all); r++ {
		if rows[all[r].i].Key == q.in.Key {
			return r + 1
		}
	}
	return 0
}
