package libsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"
)

// StreamIdle is how long a connection's server-side stream may idle before
// the connection starts a new one instead of using it. sqld expires a Hrana
// stream after about 10 s without requests (measured: a stream used again
// after 10 s works, after 11 s it answers 400 STREAM_EXPIRED).
const StreamIdle = 5 * time.Second

// renewAfter is StreamIdle; a test raises it to see an expired stream refused.
var renewAfter = StreamIdle

// connector makes connections that outlive their Hrana stream. A
// libsql-client-go connection is one stream on the server (a baton passed
// from request to request); once the server forgets it — it expired while
// idle, or the server restarted — the connection is dead for good, yet the
// client's first error does not say so (sqld's STREAM_EXPIRED answer comes
// back as a bare "error code 400"), so database/sql keeps it, and a
// connection held with DB.Conn stays dead. Each of these connections instead
// holds the client's connection as its current stream and starts a new one
// (a fresh client connection: no request needed) when
//
//   - the stream idled past StreamIdle;
//   - the server refused the stream (any 400 on the pipeline, where sqld
//     answers a statement's own error with 200): the request did not run, so
//     it is sent again on the new stream, once;
//   - the HTTP exchange failed (a dropped or refused TCP connection): the
//     request may have run, so the error is returned as is and the next
//     request starts the new stream.
//
// Inside a transaction (BeginTx, or BEGIN in SQL text) the stream is the
// transaction, so nothing is renewed or sent again:
// a lost stream fails the transaction with driver.ErrBadConn and database/sql
// drops the connection.
type connector struct{ base driver.Connector }

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	cur, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{base: c.base, cur: cur, used: time.Now()}, nil
}

func (c connector) Driver() driver.Driver { return c.base.Driver() }

// The client connection's methods this wrapper relies on.
type clientConn interface {
	driver.Conn
	driver.ExecerContext
	driver.QueryerContext
	driver.ConnPrepareContext
	driver.ConnBeginTx
}

type conn struct {
	base   driver.Connector
	cur    driver.Conn // the current stream
	used   time.Time   // when cur last answered
	broken bool        // cur's stream is gone: start a new one before the next request
	inTx   bool
}

// refused reports whether err is the server refusing the stream before
// running anything: sqld's 400 (expired, unknown or reused baton) or the
// client's own "stream is closed" after one.
func refused(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "error code 400:") || strings.Contains(msg, "error code STREAM_EXPIRED") ||
		strings.Contains(msg, "stream is closed")
}

// locked reports whether err is SQLite's busy answer (SQLITE_BUSY): the
// database was locked by another connection's write past sqld's busy timeout.
func locked(err error) bool { return strings.Contains(err.Error(), "database is locked") }

// The waits before sending a statement again that found the database locked:
// busyWait, doubled each time up to maxBusyWait (about 1.3 s in all).
const (
	busyWait    = 5 * time.Millisecond
	maxBusyWait = 640 * time.Millisecond
)

// lost reports whether err is the HTTP exchange failing, so the stream's
// baton may be out of step with the server.
func lost(err error) bool {
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// renew closes the current stream (the client tells the server in the
// background) and starts a new one.
func (c *conn) renew(ctx context.Context) error {
	next, err := c.base.Connect(ctx)
	if err != nil {
		return err
	}
	c.cur.Close()
	c.cur, c.broken = next, false
	return nil
}

// do runs op on the current stream, renewing it as the type's doc says.
func (c *conn) do(ctx context.Context, op func(clientConn) error) error {
	cc, ok := c.cur.(clientConn)
	if !ok {
		return fmt.Errorf("libsql: the client's connection (%T) lacks the context methods", c.cur)
	}
	if !c.inTx && (c.broken || time.Since(c.used) > renewAfter) {
		if err := c.renew(ctx); err != nil {
			return err
		}
		cc = c.cur.(clientConn)
	}
	err := op(cc)
	if err != nil && refused(err) && !c.inTx {
		if rerr := c.renew(ctx); rerr != nil {
			return rerr
		}
		err = op(c.cur.(clientConn))
	}
	// A statement the server found the database locked for did nothing
	// (autocommit: SQLite gives up before it writes): wait and send it again,
	// a little longer each time, while another host's write finishes.
	for wait := busyWait; err != nil && locked(err) && !c.inTx && wait <= maxBusyWait && ctx.Err() == nil; wait *= 2 {
		time.Sleep(wait)
		err = op(c.cur.(clientConn))
	}
	c.used = time.Now()
	switch {
	case err == nil:
	case refused(err):
		c.broken = true
		return fmt.Errorf("%w (%w)", err, driver.ErrBadConn) // nothing ran: database/sql may retry
	case lost(err):
		c.broken = true
	}
	return err
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (res driver.Result, err error) {
	err = c.do(ctx, func(cc clientConn) error {
		res, err = cc.ExecContext(ctx, query, args)
		return err
	})
	c.track(query, err)
	return res, err
}

// track follows transactions opened and ended in SQL text (BEGIN … COMMIT on
// one connection, as package migrations runs a file).
func (c *conn) track(query string, err error) {
	word, _, _ := strings.Cut(strings.TrimSpace(query), " ")
	switch strings.ToUpper(strings.TrimRight(word, ";")) {
	case "BEGIN":
		c.inTx = c.inTx || err == nil
	case "COMMIT", "END", "ROLLBACK":
		c.inTx = false
	}
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (rows driver.Rows, err error) {
	err = c.do(ctx, func(cc clientConn) error {
		rows, err = cc.QueryContext(ctx, query, args)
		return err
	})
	return rows, err
}

// PrepareContext checks the query with the client (which parses it locally:
// Hrana has no server-side statements) and returns a statement that runs on
// whatever stream is current when it runs.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	cc, ok := c.cur.(clientConn)
	if !ok {
		return nil, fmt.Errorf("libsql: the client's connection (%T) lacks the context methods", c.cur)
	}
	s, err := cc.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	n := s.NumInput()
	s.Close()
	return &stmt{c: c, query: query, n: n}, nil
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	var t driver.Tx
	err := c.do(ctx, func(cc clientConn) (err error) {
		t, err = cc.BeginTx(ctx, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.inTx = true
	return &tx{c: c, t: t}, nil
}

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) Ping(ctx context.Context) error {
	_, err := c.QueryContext(ctx, "SELECT 1", nil)
	return err
}

func (c *conn) Close() error { return c.cur.Close() }

// ResetSession runs when database/sql hands the connection out again: the
// client's own reset (it ends the stream, so the next request starts one).
func (c *conn) ResetSession(ctx context.Context) error {
	if r, ok := c.cur.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// IsValid tells database/sql not to pool a connection inside a transaction
// whose stream was lost.
func (c *conn) IsValid() bool { return !(c.inTx && c.broken) }

type tx struct {
	c *conn
	t driver.Tx
}

func (t *tx) Commit() error   { return t.end(t.t.Commit) }
func (t *tx) Rollback() error { return t.end(t.t.Rollback) }

func (t *tx) end(f func() error) error {
	err := f()
	t.c.inTx, t.c.used = false, time.Now()
	if err != nil && (refused(err) || lost(err)) {
		t.c.broken = true
	}
	return err
}

type stmt struct {
	c     *conn
	query string
	n     int
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return s.n }

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.ExecContext(ctx, s.query, args)
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.QueryContext(ctx, s.query, args)
}

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}
