//go:build js && wasm

package main

import (
	"context"
	"database/sql"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rowcall/rowcall/internal/examplerows"
	"github.com/rowcall/rowcall/sqlstore"
)

// seeder gives a fresh worker the example rows and modules a fresh local host
// starts with (package examplerows: DIR_GET … ROW_DOSSIER, NOW, UPPER, ECHO), on
// the first request an app serves.
//
// A database is fresh when its event log is empty: nothing was ever written to
// its directory. That costs one D1 query per isolate (per app) and is false
// forever after the first write, so a deleted example is never put back, and
// a worker that already holds rows gets nothing. Installing skips every row
// key and module name that exists, so two isolates seeding the same fresh
// database at once create each row once. The module bytes come from the
// worker binary (embedded by package wasm/examples) and go to R2 (or D1's
// module_blobs) through the registry, which compiles them in the fn sandbox as
// an upload would. A failure is printed to the worker's log and tried again
// on the next request. ROWCALL_NO_EXAMPLES=1 turns seeding off.
type seeder struct {
	db    *sql.DB
	store *sqlstore.Store
	fn    *lazyFn

	mu      sync.Mutex
	done    atomic.Bool
	created []string      // what this seeder installed (GET /_worker/stats shows it)
	took    time.Duration // how long installing took
}

// report is what GET /_worker/stats shows of the seeding.
func (s *seeder) report() map[string]any {
	if s == nil {
		return map[string]any{"enabled": false}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"enabled": true, "done": s.done.Load(), "installed": s.created, "ms": float64(s.took.Microseconds()) / 1e3}
}

// seed installs the examples into a fresh database, once per seeder.
func (s *seeder) seed(ctx context.Context) {
	if s == nil || s.done.Load() {
		return
	}
	s.mu.Lock() // requests that arrive meanwhile wait: they may be calling NOW
	defer s.mu.Unlock()
	if s.done.Load() {
		return
	}
	start := time.Now()
	created, err := s.install(ctx)
	if err != nil {
		slog.Warn("rowcall: installing the example rows (tried again on the next request)", "err", err)
		return
	}
	s.done.Store(true)
	s.created, s.took = created, time.Since(start)
	if len(created) > 0 {
		slog.Info("rowcall: a fresh database: example rows ready to call", "rows", strings.Join(created, ", "),
			"installed_in", time.Since(start).Round(time.Millisecond))
	}
}

func (s *seeder) install(ctx context.Context) ([]string, error) {
	var one int
	switch err := s.db.QueryRowContext(ctx, `SELECT 1 FROM events LIMIT 1`).Scan(&one); {
	case err == nil:
		return nil, nil // the directory has been written to: not fresh
	case err != sql.ErrNoRows:
		return nil, err
	}
	if _, err := s.fn.runner(); err != nil { // the registry compiles uploads with it
		return nil, err
	}
	return examplerows.InstallAll(ctx, s.fn.registry(), s.store)
}
