package askeval

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// Depth is how many ranked keys count: MRR@10.
const Depth = 10

// Ranker ranks the directory's rows for one plain-word intent: keys, best
// first (only the first Depth count). Today's word search is WordSearch; a
// later hybrid ranking is scored by the same command once it implements this.
type Ranker interface {
	Rank(ctx context.Context, query string) ([]string, error)
}

// WordSearch is today's ask by words alone: Store.Search with the filter ask
// uses for the owner (no token scope, enabled and planner-visible rows
// only); with Near, the matches ask answers (vectors.Ranker's cut-off).
type WordSearch struct {
	Store *sqlstore.Store
	Near  bool
}

// Rank implements Ranker.
func (w WordSearch) Rank(ctx context.Context, query string) ([]string, error) {
	f := rowcall.SearchFilter{Limit: Depth, Near: w.Near}
	var hits []rowcall.Hit
	var err error
	if w.Near {
		hits, err = (&vectors.Ranker{Words: w.Store, Weight: vectors.Weight}).Search(ctx, query, f)
	} else {
		hits, err = w.Store.Search(ctx, query, f)
	}
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(hits))
	for i, h := range hits {
		keys[i] = h.Row.Key
	}
	return keys, nil
}

// Directory returns the targets mixed among n distractors (seed Seed).
func Directory(n int) []rowcall.Row {
	rows := Targets()
	for _, d := range Distractors(n, Seed) {
		rows = append(rows, d.Row)
	}
	return rows
}

// NewStore opens a fresh embedded SQLite store in dir, migrated, holding rows:
// the host's own code path (sqlite.Open, migrations.Apply, Store.Upsert).
// Close the returned database when done.
func NewStore(ctx context.Context, dir string, rows []rowcall.Row) (*sqlstore.Store, *sql.DB, error) {
	db, err := sqlite.Open(filepath.Join(dir, "askeval.db"))
	if err != nil {
		return nil, nil, err
	}
	if _, err := migrations.Apply(ctx, db); err != nil {
		db.Close()
		return nil, nil, err
	}
	store := sqlstore.New(db)
	store.MaxParams = sqlite.MaxParams
	if err := store.Upsert(ctx, rows); err != nil {
		db.Close()
		return nil, nil, err
	}
	return store, db, nil
}

// Result is one intent's outcome: the 1-based rank of its target within the
// first Depth keys, 0 when it is not among them.
type Result struct {
	Intent Intent
	Rank   int
}

// Run ranks every intent.
func Run(ctx context.Context, r Ranker, intents []Intent) ([]Result, error) {
	out := make([]Result, 0, len(intents))
	for _, in := range intents {
		keys, err := r.Rank(ctx, in.Text)
		if err != nil {
			return nil, fmt.Errorf("rank %q: %w", in.Text, err)
		}
		keys = keys[:min(len(keys), Depth)]
		out = append(out, Result{Intent: in, Rank: slices.Index(keys, in.Key) + 1})
	}
	return out, nil
}

// Figures are the scores of a group of intents.
type Figures struct {
	N          int
	Top1, Top3 float64 // share of intents whose target ranks first, or in the first three
	MRR        float64 // mean reciprocal rank within the first Depth (0 when absent)
}

// Measure scores the results that keep selects.
func Measure(results []Result, keep func(Intent) bool) Figures {
	var f Figures
	for _, r := range results {
		if !keep(r.Intent) {
			continue
		}
		f.N++
		if r.Rank == 1 {
			f.Top1++
		}
		if r.Rank >= 1 && r.Rank <= 3 {
			f.Top3++
		}
		if r.Rank > 0 {
			f.MRR += 1 / float64(r.Rank)
		}
	}
	if f.N > 0 {
		n := float64(f.N)
		f.Top1, f.Top3, f.MRR = f.Top1/n, f.Top3/n, f.MRR/n
	}
	return f
}

// Report writes the table of figures: one line per split (all, tune, test,
// or the one named) and kind (all, shared, none).
func Report(w io.Writer, results []Result, split string) {
	splits := []string{"all", Tune, Test}
	if split != "all" {
		splits = []string{split}
	}
	fmt.Fprintf(w, "%-5s %-7s %4s %6s %6s %7s\n", "split", "kind", "n", "top1", "top3", "mrr@10")
	for _, s := range splits {
		for _, k := range []string{"all", Shared, None} {
			f := Measure(results, func(in Intent) bool {
				return (s == "all" || in.Split == s) && (k == "all" || in.Kind == k)
			})
			fmt.Fprintf(w, "%-5s %-7s %4d %6.3f %6.3f %7.3f\n", s, k, f.N, f.Top1, f.Top3, f.MRR)
		}
	}
}
