package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/rowcall/rowcall/internal/embed/use"
	"github.com/rowcall/rowcall/internal/hostmain"
	"github.com/rowcall/rowcall/internal/vectors"
	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore"
)

// ReindexCommand is `rowcall reindex [--force]`: it embeds every row whose
// vector is missing or stale (all of them with --force) with the embedded
// encoder and stores the vectors, with a progress bar on stderr. A running
// host sees the new vectors on its next look at the event log; it embeds
// changed rows by itself, so reindex is for a first fill, a new model or a
// forced rebuild.
type ReindexCommand struct {
	data, db string
	force    bool
}

func (c *ReindexCommand) Usage() (string, string) {
	return "", "embed the rows whose vectors are missing or stale (ask's finding by meaning), with a progress bar"
}

func (c *ReindexCommand) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.data, "data", "./data", "data directory (database, model weights)")
	fs.StringVar(&c.db, "db", "", hostmain.DBFlagHelp)
	fs.BoolVar(&c.force, "force", false, "embed every row again, current or not")
}

func (c *ReindexCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		return usageError("reindex", c)
	}
	db, err := hostmain.Open(ctx, c.data, c.db)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := migrations.Apply(ctx, db)
	if err != nil {
		return err
	}
	for _, n := range applied {
		fmt.Fprintln(env.Stderr, "migration applied:", n)
	}
	fmt.Fprintf(env.Stderr, "loading the encoder (%s)…\n", use.Model.ID())
	enc, err := use.Open(ctx, hostmain.WeightsDir(c.data))
	if err != nil {
		return fmt.Errorf("reindex: the encoder's weights: %w", err)
	}
	store := sqlstore.New(db)
	start := time.Now()
	bar, embedded := newProgress(env.Stderr, "embedding"), 0
	x := &vectors.Indexer{Embedder: use.Embedder{Enc: enc}, Index: vectors.NewTable(store, 0), Store: store, Force: c.force,
		Progress: func(done, todo int) { bar.total, embedded = todo, done; bar.show(done) }}
	err = x.Pass(ctx)
	bar.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "reindexed %s: %d rows embedded in %v\n", cmp.Or(c.db, c.data), embedded, time.Since(start).Round(100*time.Millisecond))
	return nil
}
