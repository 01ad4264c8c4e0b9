// Package sqlstore keeps the directory, its event log and the engine's receipts
// in a database/sql database: the embedded SQLite file, libSQL over HTTP, or
// Cloudflare D1. It uses single statements only — never BeginTx, which D1 does
// not have: a mutation and its event land together through the triggers in
// migrations/, and concurrent edits are settled by the version column
// (UPDATE … WHERE key=? AND version=? RETURNING …).
//
// Open a *sql.DB with one of the drivers (package sqlite, package libsql, or
// the worker's D1 driver), migrate it (package migrations), and wrap it with
// New. The Store reads and writes rows (Lookup, Get, List, Create, Replace,
// Delete, History), tokens, breakers, the ask index (Search) and receipts; set
// MaxParams where the backend allows more than D1's 100 bound parameters.
// NewReceiptLog starts the one writer of the receipt chain: Append and AppendIf
// return a channel that receives nil once the receipt is stored.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/rowcall/rowcall"
)

// Store is the directory over one database handle.
type Store struct {
	DB  *sql.DB
	Now func() time.Time // the clock; time.Now when nil

	// MaxParams is the most bound parameters one statement may carry: D1's
	// 100 when 0. The embedded SQLite host raises it, so bulk writes (receipt
	// group commits) take fewer, larger statements.
	MaxParams int

	// Archive, when set, holds the sealed segments of the receipt chain:
	// Receipt and Receipts read receipts pruned from the table from it.
	Archive *Archive

	// ReadPage, when set, makes the long reads (EachRow, EachReceipt) query
	// this many rows at a time instead of holding one cursor: for a backend
	// that returns whole result sets (D1, libSQL over HTTP), so that one
	// result set stays small.
	ReadPage int

	// BilledReads, when set, says the database bills every row a query reads
	// (D1): Search then scores every match instead of counting each term's
	// matches first to keep within matchBudget, since the count reads about
	// as many rows as it would save.
	BilledReads bool

	stmts sync.Map // query text → *sql.Stmt, for the statements every call runs
}

// prepared is the statement for q, prepared once (nil where a driver cannot
// prepare): for the hot statements, whose few texts every call runs.
func (s *Store) prepared(ctx context.Context, q string) *sql.Stmt {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt)
	}
	st, err := s.DB.PrepareContext(ctx, q)
	if err != nil {
		return nil
	}
	if prev, loaded := s.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		st = prev.(*sql.Stmt)
	}
	return st
}

// queryRow runs a hot query through a statement prepared once (falling back to
// an unprepared query where a driver cannot prepare).
func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if st := s.prepared(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.DB.QueryRowContext(ctx, q, args...)
}

// queryHot is queryRow for a query of several result rows.
func (s *Store) queryHot(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := s.prepared(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.DB.QueryContext(ctx, q, args...)
}

func (s *Store) maxParams() int {
	if s.MaxParams > 0 {
		return s.MaxParams
	}
	return MaxParams
}

// WholePage is the ReadPage of the backends that return whole result sets:
// 500 directory rows are about 320 KB.
const WholePage = 500

// New returns a Store over db.
func New(db *sql.DB) *Store { return &Store{DB: db} }

func (s *Store) now() string {
	if s.Now != nil {
		return s.Now().UTC().Format(rowcall.Timestamp)
	}
	return time.Now().UTC().Format(rowcall.Timestamp)
}

// columns is every stored column of directory in scan order.
const columns = `key, type, target, auth, content, updated_at, category, allowed_categories, seq,
	enabled, planner_visible, planner_rank, input_schema, examples, sensitive, runner, includes,
	created_at, version, imported_from, approval, output_schema, written_by`

// canonicalOrder is the order row_num counts in: rows with a pinned seq first
// (ascending), then the rest, each by key.
const canonicalOrder = `seq IS NULL, seq, key`

type scanner interface{ Scan(dest ...any) error }

// queryAll runs q and reads every result row with scan (collect: the one
// query-and-collect loop). No rows is an empty slice, not nil.
func queryAll[T any](ctx context.Context, s *Store, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := s.DB.QueryContext(ctx, q, args...)
	return collect(rows, err, scan)
}

// collect reads every result row of a query's rows (and closes them).
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanRow reads the columns of `columns` (plus extra destinations) into a Row.
func scanRow(sc scanner, extra ...any) (rowcall.Row, error) {
	var (
		r                                                rowcall.Row
		typ                                              string
		target, auth, content, category, allowed, schema sql.NullString
		examples, runner, includes, createdAt, imported  sql.NullString
		output, writtenBy                                sql.NullString
		seq, enabled, visible, rank, sensitive           sql.NullInt64
	)
	dest := []any{&r.Key, &typ, &target, &auth, &content, &r.UpdatedAt, &category, &allowed, &seq,
		&enabled, &visible, &rank, &schema, &examples, &sensitive, &runner, &includes, &createdAt, &r.Version, &imported, &r.Approval, &output, &writtenBy}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return r, err
	}
	r.Type = rowcall.Type(typ)
	r.Target, r.Auth, r.Content = target.String, auth.String, content.String
	r.Category, r.AllowedCategories, r.InputSchema = category.String, allowed.String, schema.String
	r.Examples, r.Runner, r.Includes, r.CreatedAt = examples.String, runner.String, includes.String, createdAt.String
	r.ImportedFrom, r.OutputSchema, r.WrittenBy = imported.String, output.String, writtenBy.String
	if seq.Valid {
		v := seq.Int64
		r.Seq = &v
	}
	r.Enabled, r.PlannerVisible, r.PlannerRank, r.Sensitive = orDefault(enabled, 1), orDefault(visible, 1), orDefault(rank, 100), sensitive.Int64
	return r, nil
}

func orDefault(v sql.NullInt64, def int64) int64 {
	if v.Valid {
		return v.Int64
	}
	return def
}

// nullable stores "" as NULL, so an absent optional field reads back as the seed
// prints it.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func seqArg(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Lookup returns the row for key without row_num: the dispatcher's hot path.
func (s *Store) Lookup(ctx context.Context, key string) (rowcall.Row, error) {
	r, err := scanRow(s.queryRow(ctx, `SELECT `+columns+` FROM directory WHERE key = ?`, key))
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound(key)
	}
	return r, err
}

func notFound(key string) error {
	return &rowcall.Error{Code: rowcall.ENotFound, Message: "no row with key " + key,
		HowToFix: "check the key (GET /api/directory lists rows), or create it with POST /api/directory",
		Extra:    map[string]any{"key": key}}
}
