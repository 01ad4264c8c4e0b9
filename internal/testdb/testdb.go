// Package testdb opens the database tests run on: a fresh SQLite file in the
// test's temporary directory with every migration applied, closed when the
// test ends. It imports nothing of sqlstore, so sqlstore's own tests can use
// it; everything above the database (a store, a signed receipt log, a
// dispatcher) is in internal/testenv.
//
//	db := testdb.Open(t)
package testdb

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// Open returns a fresh, migrated SQLite database, closed at the test's end.
func Open(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := sqlite.Open(filepath.Join(tb.TempDir(), "rowcall.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := migrations.Apply(context.Background(), db); err != nil {
		tb.Fatal(err)
	}
	return db
}
