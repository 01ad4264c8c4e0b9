package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"

	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// openData opens the database under dir and applies pending migrations.
func openData(ctx context.Context, dir string) (*sql.DB, []string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	db, err := sqlite.Open(filepath.Join(dir, "rowcall.db"))
	if err != nil {
		return nil, nil, err
	}
	applied, err := migrations.Apply(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, applied, nil
}
