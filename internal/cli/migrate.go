package cli

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"

	"github.com/rowcall/rowcall/internal/hostmain"
	"github.com/rowcall/rowcall/migrations"
)

// MigrateCommand is `rowcall migrate [list]`: apply the pending migrations,
// or list every migration and when it was applied.
type MigrateCommand struct {
	data, db string
}

func (c *MigrateCommand) Usage() (string, string) {
	return "[list]", "apply the pending migrations to the database, or list them"
}

func (c *MigrateCommand) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.data, "data", "./data", "data directory")
	fs.StringVar(&c.db, "db", "", hostmain.DBFlagHelp)
}

// Words are the positional words the command takes.
func (c *MigrateCommand) Words() []string { return []string{"list"} }

func (c *MigrateCommand) Run(ctx context.Context, env *Env, args []string) error {
	list := len(args) == 1 && args[0] == "list"
	if len(args) > 0 && !list {
		return usageError("migrate", c)
	}
	db, err := hostmain.Open(ctx, c.data, c.db)
	if err != nil {
		return err
	}
	defer db.Close()
	if list {
		return printMigrations(ctx, env.Stdout, db)
	}
	done, err := migrations.Apply(ctx, db)
	for _, n := range done {
		fmt.Fprintln(env.Stdout, "applied", n)
	}
	if err == nil && len(done) == 0 {
		fmt.Fprintln(env.Stdout, "nothing to apply: the database is current")
	}
	return err
}

func printMigrations(ctx context.Context, w io.Writer, db *sql.DB) error {
	list, err := migrations.List(ctx, db)
	if err != nil {
		return err
	}
	for _, m := range list {
		state := "pending"
		if m.AppliedAt != "" {
			state = "applied " + m.AppliedAt
		}
		fmt.Fprintf(w, "%-40s %s\n", m.Name, state)
	}
	return nil
}
