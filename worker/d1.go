//go:build js && wasm

package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
	"time"
)

// openD1 returns the worker's *sql.DB: one pool for the life of the Go
// instance, whose statements run on the D1 binding of the request that runs
// them. A connection and a prepared statement hold nothing but SQL text: each
// execution takes the DB binding from its context's request handle (see
// handleFrom). So the stores above may cache *sql.Stmt values across requests
// (sqlstore and the receipt log do) without one request's binding serving
// another.
//
// A statement crosses from Go to JavaScript once and back once (ops.go): the
// shim's d1 helper (build/shim/worker.mjs) takes the request's D1 session
// (d1session.go), the SQL and the parameters as JSON, runs
// prepare().bind().all() (or run()), and answers with D1's meta (rows read
// and written, the session's bookmark) and the rows as JSON. syumai's d1 driver, which this replaces, takes its
// binding from a process-wide runtime context, awaits D1 through promise
// callbacks of its own, and reads a result cell by cell through syscall/js
// (several calls into JavaScript per column, each JavaScript value tracked by
// a Go finalizer); on a directory row that was most of the worker's time per
// request.
func openD1() *sql.DB {
	db := sql.OpenDB(d1Connector{})
	db.SetMaxIdleConns(64) // connections are free: do not churn them
	return db
}

var errNoTx = errors.New("d1: transactions are not supported (D1 has no interactive transactions; rowcall needs none)")

type d1Connector struct{}

func (d1Connector) Connect(context.Context) (driver.Conn, error) { return d1Conn{}, nil }
func (d1Connector) Driver() driver.Driver                        { return d1Driver{} }

type d1Driver struct{}

func (d1Driver) Open(string) (driver.Conn, error) { return d1Conn{}, nil }

type d1Conn struct{}

var (
	_ driver.ConnPrepareContext = d1Conn{}
	_ driver.QueryerContext     = d1Conn{}
	_ driver.ExecerContext      = d1Conn{}
	_ driver.ConnBeginTx        = d1Conn{}
	_ driver.NamedValueChecker  = d1Conn{}
)

func (d1Conn) Prepare(q string) (driver.Stmt, error) { return d1Stmt{q: q}, nil }
func (d1Conn) PrepareContext(_ context.Context, q string) (driver.Stmt, error) {
	return d1Stmt{q: q}, nil
}
func (d1Conn) Close() error                                                 { return nil }
func (d1Conn) Begin() (driver.Tx, error)                                    { return nil, errNoTx }
func (d1Conn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) { return nil, errNoTx }

// CheckNamedValue accepts what D1 can bind, after database/sql's default
// conversion (so int becomes int64, and a driver.Valuer its value).
func (d1Conn) CheckNamedValue(nv *driver.NamedValue) error {
	v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
	if err != nil {
		return err
	}
	if t, ok := v.(time.Time); ok {
		v = t.UTC().Format(time.RFC3339Nano)
	}
	nv.Value = v
	return nil
}

func (d1Conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return d1Stmt{q: q}.QueryContext(ctx, args)
}

func (d1Conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return d1Stmt{q: q}.ExecContext(ctx, args)
}

// d1Stmt is a statement's text, bound to a D1 binding only when it runs.
type d1Stmt struct{ q string }

var (
	_ driver.StmtQueryContext = d1Stmt{}
	_ driver.StmtExecContext  = d1Stmt{}
)

func (d1Stmt) Close() error  { return nil }
func (d1Stmt) NumInput() int { return -1 }
func (d1Stmt) Exec([]driver.Value) (driver.Result, error) {
	return nil, errors.New("d1: Exec without a context is not supported")
}
func (d1Stmt) Query([]driver.Value) (driver.Rows, error) {
	return nil, errors.New("d1: Query without a context is not supported")
}

func (s d1Stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	out, err := d1Call(ctx, d1Query, s.q, args)
	if err != nil {
		return nil, err
	}
	return decodeRows(out)
}

func (s d1Stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	out, err := d1Call(ctx, d1Run, s.q, args)
	if err != nil {
		return nil, err
	}
	// [changes, last_row_id]
	changes, lastID, ok := strings.Cut(strings.Trim(out, "[]"), ",")
	c, err1 := strconv.ParseFloat(changes, 64)
	l, err2 := strconv.ParseFloat(lastID, 64)
	if !ok || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("d1: result meta %q", out)
	}
	return d1Result{changes: int64(c), lastID: int64(l)}, nil
}

type d1Result struct{ changes, lastID int64 }

func (r d1Result) LastInsertId() (int64, error) { return r.lastID, nil }
func (r d1Result) RowsAffected() (int64, error) { return r.changes, nil }

// The shim's d1 operations.
const (
	d1Query = 0 // all(): [[names…], [values…], …], [] when no rows
	d1Run   = 1 // run(): [meta.changes, meta.last_row_id]
)

// d1Call runs one statement in the D1 session of ctx's request (in a
// first-primary session of its own when ctx has none, or is onPrimary), adds
// D1's meta for it to the request's account, and returns the shim's JSON
// answer.
func d1Call(ctx context.Context, op int, q string, args []driver.NamedValue) (string, error) {
	h, err := handleFrom(ctx)
	if err != nil {
		return "", err
	}
	var db js.Value
	if _, own := ctx.Value(handleKey{}).(*reqHandle); own && ctx.Value(primaryKey{}) == nil {
		db, err = h.d1()
	} else {
		db, err = h.primarySession()
	}
	if err != nil {
		return "", err
	}
	params, err := encodeParams(args)
	if err != nil {
		return "", err
	}
	r, err := shimOp(ctx, shimD1, db, op, jsText(q), params)
	if err != nil {
		return "", fmt.Errorf("d1: %w", err)
	}
	read, written, bookmark, rest, err := parseD1Answer(r.text)
	if err != nil {
		return "", err
	}
	h.counted(q, read, written, bookmark)
	return rest, nil
}

var shimD1 = runtimeContext.Get("d1")

// jsText returns q as a JavaScript string, made once per text: a Go string
// handed to JavaScript is decoded there again on every call, and becomes a
// JavaScript value Go tracks with a finalizer. rowcall runs the same few
// statements again and again (a row read's is 450 bytes, a receipt's INSERT
// 600), so at most maxFolded texts are kept, as their account lines are
// (d1session.go), and any after those cross as they are.
func jsText(q string) any {
	jsTexts.Lock()
	defer jsTexts.Unlock()
	if v, ok := jsTexts.m[q]; ok {
		return v
	}
	if len(jsTexts.m) >= maxFolded {
		return q
	}
	v := js.ValueOf(q)
	jsTexts.m[q] = v
	return v
}

var jsTexts = struct {
	sync.Mutex
	m map[string]js.Value
}{m: map[string]js.Value{}}
