// Command score scores a ranking on the askeval dev set: it builds a fresh
// embedded SQLite store in a temporary directory, loads the 120 targets among
// -rows generated distractors, asks every intent, and prints top-1, top-3 and
// MRR@10 overall and split by shared-word or not, for each split.
//
//	go run ./test/askeval/cmd/score [-set dev|mcp|openapi|all] [-split all|tune|test] [-rows 10000]
//	    [-ranker words|bm25|vectors|hybrid|rerank] [-show] [-near]
//	    [-weight 0.3] [-k 50] [-hub 0.3] [-keywords] [-standin line|fields] [-prior 0] [-learn [-lift 0.9]]
//
// vectors and hybrid embed every row with the embedded encoder (USE-lite,
// whose weights `go run ./internal/embed/use/fetch` installs) once, and keep
// the vectors in askeval.VectorCacheDir for the next run. -weight is the
// words' share of hybrid's mix, -k how many candidates each side gives it,
// -keywords puts the key's words in front of the embedded row text. rerank is
// hybrid with its top 20 reordered through a rerank agent row and the
// stand-in model (askeval.Reranked; -standin and -prior say how it orders).
//
// -learn is the learning protocol (internal/learn): the other split's intents
// are replayed as the owner's traffic (ask, then a successful call of the
// target when it is among ask's matches) before -split is scored.
//
// -show lists each tune intent's rank (never the test split's: tune on tune only).
//
// -floors (words or hybrid) prints, for the chosen split, how each relative
// threshold on the score (vectors.Near's Floor: drop a hit under floor × the
// best) would cut ask's five matches: how many right rows ranked in the top 3
// it drops, the lowest share of the best such a row scored, and the matches
// kept on average.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/test/askeval"
)

// config is what a ranker is built from.
type config struct {
	store    *sqlstore.Store
	rows     []rowcall.Row
	weight   float64
	k        int
	keyWords bool
	standIn  string
	prior    float64
	near     bool
	hub      float64
	dir      string
	learn    bool
	lift     float64
}

// rankers are the rankings this command can score, by -ranker name.
var rankers = map[string]func(config) (askeval.Ranker, error){
	"words": func(c config) (askeval.Ranker, error) { return askeval.WordSearch{Store: c.store, Near: c.near}, nil },
	"bm25":  func(c config) (askeval.Ranker, error) { return askeval.NewBM25(c.rows), nil },
	"vectors": func(c config) (askeval.Ranker, error) {
		enc, ix, err := embed(c)
		return askeval.VectorSearch{Enc: enc, Index: ix}, err
	},
	"hybrid": func(c config) (askeval.Ranker, error) {
		enc, ix, err := embed(c)
		return askeval.Hybrid{Store: c.store, Enc: enc, Index: ix, Weight: c.weight, K: c.k, Near: c.near, Hub: c.hub}, err
	},
	"rerank": func(c config) (askeval.Ranker, error) {
		enc, ix, err := embed(c)
		if err != nil {
			return nil, err
		}
		h := askeval.Hybrid{Store: c.store, Enc: enc, Index: ix, Weight: c.weight, K: c.k, Hub: c.hub}
		dir, err := os.MkdirTemp(c.dir, "rerank-")
		if err != nil {
			return nil, err
		}
		r, _, err := askeval.NewReranked(context.Background(), h, c.rows, c.standIn, c.prior, dir)
		return r, err // the process ends after one run: nothing to close
	},
}

// embed loads the encoder and the rows' vectors (from the cache, embedding
// what it lacks).
func embed(c config) (*use.Encoder, *vectors.Memory, error) {
	dir, err := use.DefaultDir()
	if err != nil {
		return nil, nil, err
	}
	enc, err := use.Open(context.Background(), dir)
	if err != nil {
		return nil, nil, err
	}
	cache, err := askeval.VectorCacheDir()
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	ix, err := askeval.EmbedRows(enc, c.rows, c.keyWords, cache, func(done, todo int) {
		if done%512 < 16 || done == todo {
			fmt.Fprintf(os.Stderr, "\rembedded %d of %d rows (%v)", done, todo, time.Since(start).Round(time.Second))
			if done == todo {
				fmt.Fprintln(os.Stderr)
			}
		}
	})
	return enc, ix, err
}

func main() {
	split := flag.String("split", "all", "which intents to score: all, tune or test")
	setName := flag.String("set", "dev", "which dev set to score: "+strings.Join(askeval.SetNames, ", ")+" or all")
	hub := flag.Float64("hub", vectors.Hub, "hybrid, rerank: the share of a row's likeness to generic questions taken off its cosine (vectors.Hub)")
	learnFlag := flag.Bool("learn", false, "hybrid: the learning protocol: replay the other split's intents as the owner's traffic (ask, then call the target), then score -split (tune or test)")
	lift := flag.Float64("lift", 0, "hybrid -learn: learn.Lift (0: the hosts')")
	nearOnly := flag.Bool("near", false, "hybrid, words: score the matches ask answers (SearchFilter.Near: the cut-off applied)")
	rows := flag.Int("rows", 10_000, fmt.Sprintf("how many distractor rows to mix the targets into (0 to %d)", askeval.MaxDistractors))
	name := flag.String("ranker", "words", "the ranking to score (words: today's ask; vectors: cosine only; hybrid: the linear mix)")
	show := flag.Bool("show", false, "list each tune intent with its target's rank")
	floors := flag.Bool("floors", false, "words, hybrid: how relative score thresholds would cut ask's matches on the split")
	weight := flag.Float64("weight", askeval.ChosenWeight, "hybrid: the words' share of the mix, 0 to 1")
	k := flag.Int("k", askeval.ChosenK, "hybrid: candidates from each of word search and vector search (1 to 100)")
	keyWords := flag.Bool("keywords", askeval.ChosenKeyWords, "vectors, hybrid: embed the key's words (split on _) with the row's WHAT and WHEN_TO_USE")
	standIn := flag.String("standin", askeval.ChosenStandIn, "rerank: how the stand-in model orders hybrid's top 20 ("+strings.Join(askeval.StandIns, ", ")+"; askeval.StandIns)")
	prior := flag.Float64("prior", askeval.ChosenPrior, "rerank: the stand-in's weight on the order it was given")
	flag.Parse()
	if *weight < 0 || *weight > 1 {
		fmt.Fprintln(os.Stderr, "score: -weight must be 0 to 1")
		os.Exit(2)
	}
	if *k < 1 || *k > 100 {
		fmt.Fprintln(os.Stderr, "score: -k must be 1 to 100")
		os.Exit(2)
	}
	sets := askeval.SetNames
	if *setName != "all" {
		sets = []string{*setName}
	}
	for _, s := range sets {
		if err := run(s, *split, *rows, *name, *show, *floors, config{weight: *weight, k: *k, keyWords: *keyWords, standIn: *standIn, prior: *prior, near: *nearOnly, hub: *hub, learn: *learnFlag, lift: *lift}); err != nil {
			fmt.Fprintln(os.Stderr, "score:", err)
			os.Exit(1)
		}
	}
}

func run(setName, split string, rows int, name string, show, floors bool, cfg config) error {
	if split != "all" && split != askeval.Tune && split != askeval.Test {
		return fmt.Errorf("-split must be all, tune or test, not %q", split)
	}
	if rows < 0 || rows > askeval.MaxDistractors {
		return fmt.Errorf("-rows must be 0 to %d, not %d", askeval.MaxDistractors, rows)
	}
	mk, ok := rankers[name]
	if !ok {
		return fmt.Errorf("-ranker %q is unknown; the rankers are: words, bm25, vectors, hybrid, rerank", name)
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "askeval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	set, err := askeval.LoadSet(setName)
	if err != nil {
		return err
	}
	start := time.Now()
	cfg.rows = set.Rows(rows)
	store, db, err := askeval.NewStore(ctx, dir, cfg.rows)
	if err != nil {
		return err
	}
	defer db.Close()
	loaded := time.Since(start)
	cfg.store, cfg.dir = store, dir
	ranker, err := mk(cfg)
	if err != nil {
		return err
	}
	var intents []askeval.Intent
	for _, in := range set.Intents {
		if split == "all" || in.Split == split {
			intents = append(intents, in)
		}
	}
	learned := ""
	if cfg.learn {
		h, ok := ranker.(askeval.Hybrid)
		if !ok {
			return fmt.Errorf("-learn takes -ranker hybrid")
		}
		traffic, heldOut := askeval.LearnHalves(set.Intents, split)
		if len(heldOut) == 0 {
			fmt.Printf("set %s: no row has a second question in split %s: the learning protocol does not apply\n\n", setName, split)
			return nil
		}
		before, err := askeval.Run(ctx, h, heldOut)
		if err != nil {
			return err
		}
		fmt.Printf("set %s: ranker hybrid, before learning, on the %d held-out questions\n\n", setName, len(heldOut))
		askeval.Report(os.Stdout, before, split)
		fmt.Println()
		l := askeval.NewLearner(h)
		l.Lift = cfg.lift
		taught, err := askeval.Replay(ctx, h, l, traffic)
		if err != nil {
			return err
		}
		h.Learned = l
		ranker, intents = h, heldOut
		learned = fmt.Sprintf(" + learning from %d replayed questions (%d taught: the row among ask's matches), on the %d held-out questions", len(traffic), taught, len(heldOut))
	}
	start = time.Now()
	results, err := askeval.Run(ctx, ranker, intents)
	if err != nil {
		return err
	}
	if name == "hybrid" {
		name = fmt.Sprintf("hybrid (weight %.2f, k %d, keywords %v, hub %.2f)", cfg.weight, cfg.k, cfg.keyWords, cfg.hub)
	} else if r, ok := ranker.(*askeval.Reranked); ok {
		name = fmt.Sprintf("hybrid (weight %.2f, k %d) + rerank of the top 20 by the stand-in model (%s, prior %.2f; %d reranks failed)",
			cfg.weight, cfg.k, cfg.standIn, cfg.prior, r.Failures)
	} else if name == "vectors" {
		name = fmt.Sprintf("vectors (keywords %v)", cfg.keyWords)
	}
	name += learned
	if cfg.near {
		name += ", ask's answers (the cut-off applied)"
	}
	fmt.Printf("set %s: ranker %s; %d rows; loaded in %v, %d intents asked in %v\n\n",
		setName, name, len(cfg.rows), loaded.Round(time.Millisecond), len(intents), time.Since(start).Round(time.Millisecond))
	askeval.Report(os.Stdout, results, split)
	if floors {
		var r *vectors.Ranker
		switch h := ranker.(type) {
		case askeval.WordSearch:
			r = &vectors.Ranker{Words: h.Store, Weight: vectors.Weight}
		case askeval.Hybrid:
			r = h.Ranker()
		default:
			return fmt.Errorf("-floors takes -ranker words or hybrid")
		}
		if err := floorTable(ctx, r, intents); err != nil {
			return err
		}
	}
	if show {
		fmt.Println()
		for _, r := range results {
			if r.Intent.Split == askeval.Tune {
				fmt.Printf("%2d  %-6s %-32s %s\n", r.Rank, r.Intent.Kind, r.Intent.Key, r.Intent.Text)
			}
		}
	}
	return nil
}

// floorTable prints how relative thresholds would cut ask's five matches for
// intents (see -floors).
func floorTable(ctx context.Context, r *vectors.Ranker, intents []askeval.Intent) error {
	type asked struct {
		scores []float64 // ask's five, best first
		target int       // the right row's index in them, -1 when absent
	}
	var all []asked
	lowest, top3 := 1.0, 0
	for _, in := range intents {
		hits, err := r.Search(ctx, in.Text, rowcall.SearchFilter{Limit: 5})
		if err != nil {
			return err
		}
		a := asked{target: -1}
		for i, h := range hits {
			a.scores = append(a.scores, h.Score)
			if h.Row.Key == in.Key {
				a.target = i
			}
		}
		if a.target >= 0 && a.target < 3 {
			top3++
			lowest = min(lowest, a.scores[a.target]/slices.Max(a.scores))
		}
		all = append(all, a)
	}
	fmt.Printf("\n%d intents with the right row in the top 3; its lowest share of the best score: %.3f\n", top3, lowest)
	fmt.Println("floor  top-3 right rows dropped  matches kept of 5 (mean)")
	for _, f := range []float64{0, 0.45, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9} {
		dropped, kept := 0, 0
		for _, a := range all {
			if len(a.scores) == 0 {
				continue
			}
			best := slices.Max(a.scores)
			for i, s := range a.scores {
				if s >= f*best {
					kept++
				} else if i == a.target && i < 3 {
					dropped++
				}
			}
		}
		fmt.Printf("%5.2f  %24d  %.2f\n", f, dropped, float64(kept)/float64(len(all)))
	}
	return nil
}
