package libsql

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/testdb"
)

func TestIsURL(t *testing.T) {
	for s, want := range map[string]bool{
		"libsql://db.turso.io": true, "https://db.example": true, "http://127.0.0.1:8080": true, "HTTP://X:1": true,
		"./data/rowcall.db": false, "file:/tmp/x.db": false, "": false, "ws://x": false,
	} {
		if IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v", s, !want)
		}
	}
}

func TestRedact(t *testing.T) {
	got := Redact("libsql://u:secretpw@db.turso.io?authToken=eyJsecret&tls=1")
	if strings.Contains(got, "secret") || !strings.Contains(got, "db.turso.io") {
		t.Fatalf("Redact: %s", got)
	}
}

func TestOpenRefusesNonURLs(t *testing.T) {
	_, err := Open(context.Background(), "./data/rowcall.db?authToken=topsecret")
	if err == nil || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("err %v", err)
	}
}

// A connection held with DB.Conn (as the receipt writer holds one) keeps
// working after sqld restarts under it: its stream and TCP connection are
// gone and the new server refuses its baton, so it starts a new stream and
// sends the statement again (the refused one never ran: one row each).
func TestConnOutlivesServerRestart(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	dbPath := filepath.Join(t.TempDir(), "db")
	stop := testdb.Sqld(t, addr, dbPath)
	ctx := context.Background()
	db, conn := heldConn(t, addr)
	insert := func(n int) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, `INSERT INTO t VALUES (?)`, n); err != nil {
			t.Fatalf("insert %d: %v", n, err)
		}
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE t (n INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	insert(1)
	stop()
	testdb.Sqld(t, addr, dbPath)
	insert(2)
	insert(3)
	var count int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&count); err != nil || count != 3 {
		t.Fatalf("%d rows (%v), want 3", count, err)
	}
}

// heldConn opens the database on the sqld at addr and holds one connection,
// as the receipt writer does; both close when the test ends.
func heldConn(t *testing.T, addr string) (*sql.DB, *sql.Conn) {
	t.Helper()
	db, err := Open(context.Background(), "http://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return db, conn
}

// A locked database (SQLITE_BUSY) is sent again; nothing else is.
func TestLocked(t *testing.T) {
	for msg, want := range map[string]bool{
		"failed to execute SQL:\nSQLite error: database is locked": true,
		"UNIQUE constraint failed: receipts.seq":                   false,
		"error code 400: ":                                         false,
	} {
		if locked(errors.New(msg)) != want {
			t.Errorf("locked(%q) = %v", msg, !want)
		}
	}
}

// Only the server's refusal of a stream counts as "nothing ran".
func TestRefused(t *testing.T) {
	for msg, want := range map[string]bool{
		"error code 400: ":                           true, // sqld's STREAM_EXPIRED, as the client reports it
		"error code 400: Received an invalid baton":  true, // a restarted sqld
		"stream is closed: driver: bad connection":   true,
		"UNIQUE constraint failed: receipts.seq":     false,
		"error code 401: Unauthorized":               false,
		`Post "http://127.0.0.1:1/v2/pipeline": EOF`: false,
		"SQLite error: no such table: receipts":      false,
	} {
		if refused(errors.New(msg)) != want {
			t.Errorf("refused(%q) = %v", msg, !want)
		}
	}
}

// A held connection whose stream sqld expired (not renewed first: the idle
// renewal is off) has it refused, and sends the statement again on a new one.
func TestConnOutlivesExpiredStream(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	testdb.Sqld(t, addr, filepath.Join(t.TempDir(), "db"))
	renewAfter = time.Hour
	defer func() { renewAfter = StreamIdle }()
	ctx := context.Background()
	_, conn := heldConn(t, addr)
	if _, err := conn.ExecContext(ctx, `CREATE TABLE t (n INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(11 * time.Second) // sqld expires a stream idle for about 10 s
	if _, err := conn.ExecContext(ctx, `INSERT INTO t VALUES (1)`); err != nil {
		t.Fatalf("after the stream expired: %v", err)
	}
	var count int
	if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&count); err != nil || count != 1 {
		t.Fatalf("%d rows (%v), want 1", count, err)
	}
}
