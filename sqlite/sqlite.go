// Package sqlite opens rowcall's embedded database: a SQLite file through the
// pure-Go modernc.org/sqlite driver (no cgo), with WAL, foreign keys and a busy
// timeout set on every connection.
package sqlite

import (
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// MaxConns is the connection pool's size: enough for concurrent readers (WAL
// lets them run beside the one writer), few enough to stay cheap.
const MaxConns = 16

// Open opens (creating if needed) the SQLite file at path.
func Open(path string) (*sql.DB, error) {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "foreign_keys(ON)", "busy_timeout(10000)", "synchronous(NORMAL)"} {
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
