package sqlstore_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync/atomic"
)

// faulty is a connector over a real driver whose next receipt INSERT fails
// with a connection error, after running (its answer lost) or before; and
// before which, if set, runs before every receipt INSERT.
type faulty struct {
	drv    driver.Driver
	dsn    string
	armed  atomic.Int32 // 0: none; 1: fail after running; 2: fail before
	fired  atomic.Int32
	before func()
}

var errLost = errors.New("read tcp 127.0.0.1:1: connection reset by peer (a test fault)")

func (f *faulty) failNext(afterRunning bool) {
	if afterRunning {
		f.armed.Store(1)
	} else {
		f.armed.Store(2)
	}
}

func (f *faulty) Connect(context.Context) (driver.Conn, error) {
	c, err := f.drv.Open(f.dsn)
	return faultyConn{c, f}, err
}

func (f *faulty) Driver() driver.Driver { return f.drv }

type faultyConn struct {
	driver.Conn
	f *faulty
}

func (c faultyConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	s, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return faultyStmt{s, c.f, strings.HasPrefix(q, "INSERT INTO receipts")}, nil
}

type faultyStmt struct {
	driver.Stmt
	f      *faulty
	insert bool
}

func (s faultyStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	mode := int32(0)
	if s.insert {
		mode = s.f.armed.Swap(0)
		if s.f.before != nil {
			s.f.before()
		}
	}
	if mode == 2 {
		s.f.fired.Add(1)
		return nil, errLost
	}
	res, err := s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	if mode == 1 && err == nil {
		s.f.fired.Add(1)
		return nil, errLost
	}
	return res, err
}

func (s faultyStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}
