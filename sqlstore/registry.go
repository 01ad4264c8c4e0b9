package sqlstore

import (
	"context"
	"strings"

	"github.com/rowcall/rowcall"
)

// AllRows returns every row in canonical order: only enabled, planner-visible
// rows unless all, and only the scope's rows when scope is set.
func (s *Store) AllRows(ctx context.Context, scope *rowcall.Scope, all bool) ([]rowcall.Row, error) {
	var where []string
	var args []any
	if !all {
		where = append(where, "COALESCE(enabled, 1) = 1", "COALESCE(planner_visible, 1) = 1")
	}
	if c, a := scopeClause(scope, ""); c != "" {
		where, args = append(where, c), append(args, a...)
	}
	q := `SELECT ` + columns + ` FROM directory`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return queryAll(ctx, s, scanColumns, q+` ORDER BY `+canonicalOrder, args...)
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
