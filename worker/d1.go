//go:build js && wasm

package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
)

// openD1 returns the worker's *sql.DB: one pool for the life of the Go
// instance, whose statements run on the D1 binding of the request that runs
// them. A connection and a prepared statement hold nothing but SQL text: each
// execution takes the DB binding from its context's request handle and runs
// through syumai's d1 driver on it (prepare, bind, raw/run). So the stores
// above may cache *sql.Stmt values across requests (sqlstore and the receipt
// log do) without one request's binding serving another.
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
)

func (d1Conn) Prepare(q string) (driver.Stmt, error) { return d1Stmt{q: q}, nil }
func (d1Conn) PrepareContext(_ context.Context, q string) (driver.Stmt, error) {
	return d1Stmt{q: q}, nil
}
func (d1Conn) Close() error                                                 { return nil }
func (d1Conn) Begin() (driver.Tx, error)                                    { return nil, errNoTx }
func (d1Conn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) { return nil, errNoTx }

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

// on prepares the statement with syumai's driver on the D1 binding of ctx's
// request.
func (s d1Stmt) on(ctx context.Context) (driver.Stmt, error) {
	h, err := handleFrom(ctx)
	if err != nil {
		return nil, err
	}
	c, err := h.d1Conn()
	if err != nil {
		return nil, err
	}
	return c.(driver.ConnPrepareContext).PrepareContext(ctx, s.q)
}

func (s d1Stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	st, err := s.on(ctx)
	if err != nil {
		return nil, err
	}
	return st.(driver.StmtQueryContext).QueryContext(ctx, args)
}

func (s d1Stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	st, err := s.on(ctx)
	if err != nil {
		return nil, err
	}
	return st.(driver.StmtExecContext).ExecContext(ctx, args)
}
