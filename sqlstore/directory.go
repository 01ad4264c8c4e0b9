package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/rowcall/rowcall"
)

// Get returns the row for key with its row_num, counted on the canonical
// order's index: it reads about as many index entries as rows come before it
// (not the whole table).
func (s *Store) Get(ctx context.Context, key string) (rowcall.Row, error) {
	var n int64
	r, err := scanRow(s.queryRow(ctx, getSQL, key), &n)
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound(key)
	}
	r.RowNum = n
	return r, err
}

// getSQL reads one row and its row_num: 1 + the rows before it in canonical
// order (seq IS NULL, seq, key), counted on directory_order (seq, key).
const getSQL = `SELECT ` + columns + `, 1 + CASE WHEN d.seq IS NULL
		THEN (SELECT COUNT(*) FROM directory o WHERE o.seq IS NOT NULL) + (SELECT COUNT(*) FROM directory o WHERE o.seq IS NULL AND o.key < d.key)
		ELSE (SELECT COUNT(*) FROM directory o WHERE (o.seq, o.key) < (d.seq, d.key)) END
	FROM directory d WHERE d.key = ?`

// scopeClause is the one SQL condition for "in the scope": a row whose key is
// one of Keys or whose category is one of Categories, with prefix naming the
// directory table's alias ("" or "d."). It is "" when the scope is nil or
// covers every row ("*"). Each list is one bound JSON parameter, whatever its
// size (D1 allows 100 parameters a statement).
func scopeClause(sc *rowcall.Scope, prefix string) (string, []any) {
	if sc == nil || slices.Contains(sc.Categories, "*") {
		return "", nil
	}
	keys, _ := json.Marshal(orNone(sc.Keys))
	cats, _ := json.Marshal(orNone(sc.Categories))
	return "(" + prefix + "key IN (SELECT value FROM json_each(?)) OR " + prefix + "category IN (SELECT value FROM json_each(?)))",
		[]any{string(keys), string(cats)}
}

// List returns rows in canonical order with their row_num, and the number of
// rows matching the filter. An unfiltered page reads its offset plus its rows
// (an index walk); a filtered one reads the whole directory (row_num counts
// in all of it), unless it is Bare. docs/d1.md has the figures.
func (s *Store) List(ctx context.Context, f rowcall.Filter) (rowcall.Page, error) {
	if f.Limit <= 0 {
		f.Limit = rowcall.DefaultPage
	}
	f.Limit = min(f.Limit, rowcall.MaxPage)
	q, args, cond, condArgs, numbered := listQuery(f)
	rows, err := s.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return rowcall.Page{}, err
	}
	defer rows.Close()
	p := rowcall.Page{Rows: []rowcall.Row{}}
	for rows.Next() {
		var n int64
		r, err := scanRow(rows, &n, &p.Total)
		if err != nil {
			return p, err
		}
		if !numbered && !f.Bare {
			n = int64(f.Offset + len(p.Rows) + 1)
		}
		r.RowNum = n
		p.Rows = append(p.Rows, r)
	}
	if err := rows.Err(); err != nil {
		return p, err
	}
	if len(p.Rows) == 0 && f.Offset > 0 && !f.Bare { // past the end: still report the total
		count := `SELECT rows FROM directory_count`
		if cond != "" {
			count = `SELECT COUNT(*) FROM directory` + cond
		}
		err = s.DB.QueryRowContext(ctx, count, condArgs...).Scan(&p.Total)
	}
	return p, err
}

// listQuery is List's statement for f: the filter's WHERE clause and its
// arguments, and whether the statement numbers the rows itself.
//
// Unfiltered (the common page), it walks the canonical order's index
// (directory_canonical) for offset+limit rows, which List numbers from the
// offset, and takes the total from directory_count. Bare, it walks the same
// index and filters as it goes. A filtered page keeps the window over the
// whole directory: its row_num is the place in all of it.
func listQuery(f rowcall.Filter) (q string, args []any, cond string, condArgs []any, numbered bool) {
	var where []string
	if f.Type != "" {
		where, condArgs = append(where, "type = ?"), append(condArgs, string(f.Type))
	}
	if f.Category != "" {
		where, condArgs = append(where, "category = ?"), append(condArgs, f.Category)
	}
	if f.Enabled != nil {
		where, condArgs = append(where, "COALESCE(enabled, 1) = ?"), append(condArgs, *f.Enabled)
	}
	if c, a := scopeClause(f.Scope, ""); c != "" {
		where, condArgs = append(where, c), append(condArgs, a...)
	}
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	args = append(slices.Clone(condArgs), f.Limit, f.Offset)
	switch {
	case f.Bare:
		// SQLite walks directory_canonical and filters as it goes, or, for a
		// type or category, may read that column's matches and sort them.
		q = `SELECT ` + columns + `, 0 AS row_num, 0 AS total FROM directory` + cond +
			` ORDER BY ` + canonicalOrder + ` LIMIT ? OFFSET ?`
	case cond == "":
		q = `SELECT ` + columns + `, 0 AS row_num, (SELECT rows FROM directory_count) AS total FROM directory ORDER BY ` +
			canonicalOrder + ` LIMIT ? OFFSET ?`
	default:
		q = `SELECT ` + columns + `, row_num, COUNT(*) OVER () FROM (SELECT ` + columns +
			`, ROW_NUMBER() OVER (ORDER BY ` + canonicalOrder + `) AS row_num FROM directory)` + cond +
			` ORDER BY row_num LIMIT ? OFFSET ?`
		numbered = true
	}
	return q, args, cond, condArgs, numbered
}

// Create inserts a new row at version 1. A key that exists is EConflict.
func (s *Store) Create(ctx context.Context, r rowcall.Row) (rowcall.Row, error) {
	now := s.now()
	q := `INSERT INTO directory (key, type, target, auth, content, updated_at, category, allowed_categories, seq,
		enabled, planner_visible, planner_rank, input_schema, examples, sensitive, runner, includes, created_at, imported_from, approval, output_schema, written_by, version)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1)
		ON CONFLICT (key) DO NOTHING RETURNING ` + columns
	out, err := scanRow(s.DB.QueryRowContext(ctx, q, r.Key, string(r.Type), nullable(r.Target), nullable(r.Auth),
		nullable(r.Content), now, nullable(r.Category), nullable(r.AllowedCategories), seqArg(r.Seq),
		r.Enabled, r.PlannerVisible, r.PlannerRank, nullable(r.InputSchema), nullable(r.Examples), r.Sensitive,
		nullable(r.Runner), nullable(r.Includes), now, nullable(r.ImportedFrom), r.Approval, nullable(r.OutputSchema), nullable(r.WrittenBy)))
	if errors.Is(err, sql.ErrNoRows) {
		return out, &rowcall.Error{Code: rowcall.EConflict, Message: "a row with key " + r.Key + " already exists",
			HowToFix: "edit it with PUT or PATCH /api/directory/" + r.Key + ", or choose another key",
			Extra:    map[string]any{"key": r.Key}}
	}
	return out, quotaError(err)
}

// quotaError is err as the refusal it is when a quota's trigger raised it
// (migrations/0030_quotas.sql), else err.
func quotaError(err error) error {
	if err == nil || !strings.Contains(err.Error(), "quota_exceeded:rows") {
		return err
	}
	return &rowcall.Error{Code: rowcall.EQuotaExceeded, Args: []string{"rows"},
		Message:  "this directory holds as many rows as its quota allows; nothing was written",
		HowToFix: "delete rows you no longer need, or ask the host's operator for a larger quota"}
}

// Replace overwrites every writable column of an existing row and bumps its
// version. With ifVersion > 0 the write happens only if the stored version still
// equals it; otherwise the current row comes back with EVersionConflict.
func (s *Store) Replace(ctx context.Context, r rowcall.Row, ifVersion int64) (rowcall.Row, error) {
	q := `UPDATE directory SET type=?, target=?, auth=?, content=?, updated_at=?, category=?, allowed_categories=?,
		seq=?, enabled=?, planner_visible=?, planner_rank=?, input_schema=?, examples=?, sensitive=?, runner=?,
		includes=?, imported_from = COALESCE(?, imported_from), approval=?, output_schema=?, written_by=?, version = version + 1
		WHERE key = ? AND (? = 0 OR version = ?) RETURNING ` + columns
	out, err := scanRow(s.DB.QueryRowContext(ctx, q, string(r.Type), nullable(r.Target), nullable(r.Auth),
		nullable(r.Content), s.now(), nullable(r.Category), nullable(r.AllowedCategories), seqArg(r.Seq),
		r.Enabled, r.PlannerVisible, r.PlannerRank, nullable(r.InputSchema), nullable(r.Examples), r.Sensitive,
		nullable(r.Runner), nullable(r.Includes), nullable(r.ImportedFrom), r.Approval, nullable(r.OutputSchema), nullable(r.WrittenBy), r.Key, ifVersion, ifVersion))
	if errors.Is(err, sql.ErrNoRows) {
		return out, s.whyNot(ctx, r.Key, ifVersion)
	}
	return out, err
}

// Delete removes a row, its delete event naming by as the writer. With
// ifVersion > 0 only if the version still matches. It is one statement, an
// INSERT into directory_deletions of the row's key (selected only when the
// row is at ifVersion) and by, whose trigger deletes the row: the delete
// event's trigger reads the deleter there, as no DELETE can pass it
// (migrations/0029_directory_written_by.sql).
func (s *Store) Delete(ctx context.Context, key string, ifVersion int64, by string) error {
	var k string
	err := s.DB.QueryRowContext(ctx, `INSERT INTO directory_deletions (key, written_by)
		SELECT key, ? FROM directory WHERE key = ? AND (? = 0 OR version = ?) RETURNING key`,
		nullable(by), key, ifVersion, ifVersion).Scan(&k)
	if errors.Is(err, sql.ErrNoRows) {
		return s.whyNot(ctx, key, ifVersion)
	}
	return err
}

// whyNot explains a conditional write that matched no row: the row is gone, or
// its version moved on.
func (s *Store) whyNot(ctx context.Context, key string, ifVersion int64) error {
	cur, err := s.Lookup(ctx, key)
	if err != nil {
		return err
	}
	return rowcall.VersionConflict(cur, ifVersion)
}

// Catalog lists enabled rows by category: what the agent runner offers a
// model as native tools (runners/agent.Catalog).
type Catalog struct{ Store *Store }

// Rows returns up to limit enabled rows of category ("" for every category).
func (c Catalog) Rows(ctx context.Context, category string, limit int) ([]rowcall.Row, error) {
	on := int64(1)
	p, err := c.Store.List(ctx, rowcall.Filter{Category: category, Enabled: &on, Limit: limit, Bare: true})
	return p.Rows, err
}
