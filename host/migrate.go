package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"

	"github.com/rowcall/rowcall/internal/hostmain"
	"github.com/rowcall/rowcall/migrations"
)

// migrate implements `rowcall migrate [list]`.
func migrate(args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ExitOnError)
	dataDir := fs.String("data", "./data", "data directory")
	dbURL := fs.String("db", "", hostmain.DBFlagHelp)
	list := len(args) > 0 && args[0] == "list"
	if list {
		args = args[1:]
	}
	fs.Parse(args)
	db, err := hostmain.Open(context.Background(), *dataDir, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	if list {
		return printMigrations(ctx, db)
	}
	done, err := migrations.Apply(ctx, db)
	for _, n := range done {
		fmt.Println("applied", n)
	}
	if err == nil && len(done) == 0 {
		fmt.Println("nothing to apply: the database is current")
	}
	return err
}

func printMigrations(ctx context.Context, db *sql.DB) error {
	list, err := migrations.List(ctx, db)
	if err != nil {
		return err
	}
	for _, m := range list {
		state := "pending"
		if m.AppliedAt != "" {
			state = "applied " + m.AppliedAt
		}
		fmt.Printf("%-40s %s\n", m.Name, state)
	}
	return nil
}
