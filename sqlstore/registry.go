package sqlstore

import (
	"context"
	"strings"

	"github.com/rowcall/rowcall"
)

// AllRows returns every row in canonical order: only enabled, planner-visible
// rows unless all, and only the scope's rows when scope is set. It collects
// EachRow.
func (s *Store) AllRows(ctx context.Context, scope *rowcall.Scope, all bool) ([]rowcall.Row, error) {
	out := []rowcall.Row{}
	err := s.EachRow(ctx, scope, all, func(r *rowcall.Row) error {
		out = append(out, *r)
		return nil
	})
	return out, err
}

// CountRows is how many rows EachRow (and AllRows) would give.
func (s *Store) CountRows(ctx context.Context, scope *rowcall.Scope, all bool) (int, error) {
	where, args := registryWhere(scope, all)
	var n int
	err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM directory`+whereClause(where), args...).Scan(&n)
	return n, err
}

// EachRow calls fn with each row AllRows returns, in the same order, as it is
// read, so a caller can write rows out without holding them all; fn's *Row is
// valid only during the call. An error from fn stops the read and is returned.
//
// With ReadPage set (a backend that returns whole result sets: D1, libSQL
// over HTTP) it reads ReadPage rows per query, each page after the last key
// of the one before in canonical order; otherwise it reads one cursor.
func (s *Store) EachRow(ctx context.Context, scope *rowcall.Scope, all bool, fn func(*rowcall.Row) error) error {
	where, args := registryWhere(scope, all)
	q := `SELECT ` + columns + ` FROM directory`
	if s.ReadPage <= 0 {
		return s.each(ctx, q+whereClause(where)+` ORDER BY `+canonicalOrder, args, fn)
	}
	var last *rowcall.Row
	for {
		w, a := where, args
		if last != nil {
			// After last in canonical order (seq IS NULL, seq, key): a row
			// with a pinned seq sorts before every row without one.
			if last.Seq == nil {
				w, a = append(w[:len(w):len(w)], "seq IS NULL AND key > ?"), append(a[:len(a):len(a)], last.Key)
			} else {
				w = append(w[:len(w):len(w)], "(seq IS NULL OR seq > ? OR (seq = ? AND key > ?))")
				a = append(a[:len(a):len(a)], *last.Seq, *last.Seq, last.Key)
			}
		}
		n := 0
		err := s.each(ctx, q+whereClause(w)+` ORDER BY `+canonicalOrder+` LIMIT ?`, append(a[:len(a):len(a)], s.ReadPage), func(r *rowcall.Row) error {
			n++
			if n == s.ReadPage {
				kept := rowcall.Row{Key: r.Key, Seq: r.Seq}
				last = &kept
			}
			return fn(r)
		})
		if err != nil || n < s.ReadPage {
			return err
		}
	}
}

// each runs q and calls fn with each row as it is scanned.
func (s *Store) each(ctx context.Context, q string, args []any, fn func(*rowcall.Row) error) error {
	rows, err := s.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return err
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// registryWhere is the condition of AllRows, CountRows and EachRow.
func registryWhere(scope *rowcall.Scope, all bool) ([]string, []any) {
	var where []string
	var args []any
	if !all {
		where = append(where, "COALESCE(enabled, 1) = 1", "COALESCE(planner_visible, 1) = 1")
	}
	if c, a := scopeClause(scope, ""); c != "" {
		where, args = append(where, c), append(args, a...)
	}
	return where, args
}

func whereClause(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(where, " AND ")
}

// ModuleUsers returns the keys of fn rows whose target names module (plain or
// pinned).
func (s *Store) ModuleUsers(ctx context.Context, module string) ([]string, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT key FROM directory WHERE type = 'fn' AND (target = ? OR substr(target, 1, ?) = ?) ORDER BY key`,
		module, len(module)+1, module+"@")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}
