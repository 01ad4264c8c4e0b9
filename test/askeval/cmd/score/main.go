// Command score scores a ranking on the askeval dev set: it builds a fresh
// embedded SQLite store in a temporary directory, loads the 120 targets among
// -rows generated distractors, asks every intent, and prints top-1, top-3 and
// MRR@10 overall and split by shared-word or not, for each split.
//
//	go run ./test/askeval/cmd/score [-split all|tune|test] [-rows 10000] [-ranker words] [-show]
//
// -show lists each tune intent's rank (never the test split's: tune on tune only).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/test/askeval"
)

// rankers are the rankings this command can score, by -ranker name.
var rankers = map[string]func(*sqlstore.Store) askeval.Ranker{
	"words": func(s *sqlstore.Store) askeval.Ranker { return askeval.WordSearch{Store: s} },
}

func main() {
	split := flag.String("split", "all", "which intents to score: all, tune or test")
	rows := flag.Int("rows", 10_000, fmt.Sprintf("how many distractor rows to mix the targets into (0 to %d)", askeval.MaxDistractors))
	name := flag.String("ranker", "words", "the ranking to score (words: today's ask)")
	show := flag.Bool("show", false, "list each tune intent with its target's rank")
	flag.Parse()
	if err := run(*split, *rows, *name, *show); err != nil {
		fmt.Fprintln(os.Stderr, "score:", err)
		os.Exit(1)
	}
}

func run(split string, rows int, name string, show bool) error {
	if split != "all" && split != askeval.Tune && split != askeval.Test {
		return fmt.Errorf("-split must be all, tune or test, not %q", split)
	}
	if rows < 0 || rows > askeval.MaxDistractors {
		return fmt.Errorf("-rows must be 0 to %d, not %d", askeval.MaxDistractors, rows)
	}
	mk, ok := rankers[name]
	if !ok {
		return fmt.Errorf("-ranker %q is unknown; the rankers are: words", name)
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "askeval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	store, db, err := askeval.NewStore(ctx, dir, askeval.Directory(rows))
	if err != nil {
		return err
	}
	defer db.Close()
	loaded := time.Since(start)
	var intents []askeval.Intent
	for _, in := range askeval.Intents() {
		if split == "all" || in.Split == split {
			intents = append(intents, in)
		}
	}
	start = time.Now()
	results, err := askeval.Run(ctx, mk(store), intents)
	if err != nil {
		return err
	}
	fmt.Printf("ranker %s; %d targets among %d distractors (seed %d); loaded in %v, %d intents asked in %v\n\n",
		name, len(askeval.Targets()), rows, askeval.Seed, loaded.Round(time.Millisecond), len(intents), time.Since(start).Round(time.Millisecond))
	askeval.Report(os.Stdout, results, split)
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
