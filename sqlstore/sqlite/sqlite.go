// Package sqlite opens rowcall's embedded database: a SQLite file through the
// pure-Go modernc.org/sqlite driver (no cgo), with WAL, foreign keys and a busy
// timeout set on every connection.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// MaxParams is the most bound parameters SQLite takes in one statement
// (SQLITE_MAX_VARIABLE_NUMBER).
const MaxParams = 32766

// MaxConns is the connection pool's size: enough for concurrent readers (WAL
// lets them run beside the one writer), few enough to stay cheap.
const MaxConns = 16

// Open opens (creating if needed) the SQLite file at path.
func Open(path string) (*sql.DB, error) {
	q := url.Values{}
	// wal_autocheckpoint(0): the commit that crosses the WAL threshold would
	// otherwise run the checkpoint (with its fsync) while holding up every
	// writer behind it; Checkpointer does it in the background instead.
	for _, p := range []string{"journal_mode(WAL)", "foreign_keys(ON)", "busy_timeout(10000)", "synchronous(NORMAL)", "wal_autocheckpoint(0)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Keep every connection: opening one re-applies the pragmas, and
	// database/sql's default of two idle connections makes a busy host open
	// and close connections on every call.
	db.SetMaxOpenConns(MaxConns)
	db.SetMaxIdleConns(MaxConns)
	return db, nil
}

// Checkpointer copies the WAL back into the database file every interval,
// without blocking readers or writers (a PASSIVE checkpoint), until ctx ends;
// then it truncates the WAL once. Open turns SQLite's own automatic
// checkpoint off, so a host must run this.
func Checkpointer(ctx context.Context, db *sql.DB, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
			return
		case <-t.C:
			db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}
}
