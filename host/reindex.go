package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/sqlstore"
)

// reindex implements `rowcall reindex [--data ./data] [--db URL] [--force]`:
// it embeds every row whose vector is missing or stale (all of them with
// --force) with the embedded encoder and stores the vectors, with a
// progress bar on stderr. A running host sees the new vectors on its next
// look at the event log; it embeds changed rows by itself, so reindex is for
// a first fill, a new model or a forced rebuild.
func reindex(args []string) error {
	fs := flag.NewFlagSet("reindex", flag.ExitOnError)
	dataDir := fs.String("data", "./data", "data directory (database, model weights)")
	dbURL := fs.String("db", "", dbFlagHelp)
	force := fs.Bool("force", false, "embed every row again, current or not")
	fs.Parse(args)
	ctx := context.Background()
	db, applied, where, err := openDatabase(ctx, *dataDir, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, n := range applied {
		fmt.Fprintln(os.Stderr, "migration applied:", n)
	}
	fmt.Fprintf(os.Stderr, "loading the encoder (%s)…\n", use.Model.ID())
	enc, err := use.Open(ctx, weightsDir(*dataDir))
	if err != nil {
		return fmt.Errorf("reindex: the encoder's weights: %w", err)
	}
	store := sqlstore.New(db)
	start := time.Now()
	bar := progressBar(start)
	x := &vectors.Indexer{Embedder: use.Embedder{Enc: enc}, Index: vectors.NewTable(store, 0), Store: store, Force: *force, Progress: bar}
	if err := x.Pass(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "\nreindexed %s in %v\n", where, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// progressBar draws done/todo as a bar on stderr, rewriting its line.
func progressBar(start time.Time) func(done, todo int) {
	const width = 30
	return func(done, todo int) {
		n := width * done / max(todo, 1)
		fmt.Fprintf(os.Stderr, "\r[%s%s] %d/%d rows, %v", strings.Repeat("#", n), strings.Repeat(".", width-n), done, todo,
			time.Since(start).Round(time.Second))
	}
}
