package hostmain

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"time"

	"github.com/rowcall/rowcall/migrations"
	"github.com/rowcall/rowcall/sqlstore/libsql"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// DBFlagHelp is the --db flag's help, shared by serve and migrate.
const DBFlagHelp = "database: a libSQL server URL (libsql://HOST, https://HOST, http://HOST:PORT; token in $" + libsql.TokenEnv +
	") instead of the embedded SQLite file DATA/rowcall.db"

// Open opens the database dbURL names (a libSQL server), or the embedded file
// under dataDir when dbURL is "", without migrating it. dataDir is created
// either way: the owner and receipt keys live there.
func Open(ctx context.Context, dataDir, dbURL string) (*sql.DB, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	if dbURL == "" {
		return sqlite.Open(filepath.Join(dataDir, "rowcall.db"))
	}
	return libsql.Open(ctx, dbURL)
}

// openDatabase opens the database (Open) and applies pending migrations.
// where describes it for messages (never with a token).
func openDatabase(ctx context.Context, dataDir, dbURL string) (db *sql.DB, applied []string, where string, err error) {
	db, err = Open(ctx, dataDir, dbURL)
	if err != nil {
		return nil, nil, "", err
	}
	applied, err = migrations.Apply(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, "", err
	}
	where = filepath.Join(dataDir, "rowcall.db")
	if dbURL != "" {
		where = libsql.Redact(dbURL)
	}
	return db, applied, where, nil
}

// checkpoints keeps the embedded file's WAL short until the returned stop is
// called: small checkpoints often (one a second under load copied ~10 MB of
// WAL at once and showed in the callers' p99, docs/benchmarks.md).
func checkpoints(db *sql.DB) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { sqlite.Checkpointer(ctx, db, 100*time.Millisecond); close(done) }()
	return func() { cancel(); <-done }
}

// freshDatabase reports whether this start created the database (it applied the
// first migration), which is when the example rows are installed.
func freshDatabase(applied []string) bool {
	return len(applied) > 0 && applied[0] == migrations.Names()[0]
}
