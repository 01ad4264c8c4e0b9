package sqlstore

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/rowcall/rowcall"
)

// AllRows returns every row in canonical order: only enabled, planner-visible
// rows unless all, and only the scope's rows when scope is set.
func (s *Store) AllRows(ctx context.Context, scope *Scope, all bool) ([]rowcall.Row, error) {
	var where []string
	var args []any
	if !all {
		where = append(where, "COALESCE(enabled, 1) = 1", "COALESCE(planner_visible, 1) = 1")
	}
	if scope != nil && !slices.Contains(scope.Categories, "*") {
		keys, _ := json.Marshal(orNone(scope.Keys))
		cats, _ := json.Marshal(orNone(scope.Categories))
		where = append(where, "(key IN (SELECT value FROM json_each(?)) OR category IN (SELECT value FROM json_each(?)))")
		args = append(args, string(keys), string(cats))
	}
	q := `SELECT ` + columns + ` FROM directory`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.DB.QueryContext(ctx, q+` ORDER BY `+canonicalOrder, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []rowcall.Row{}
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LastEventID is the id of the newest event: it changes whenever the directory
// does, so it versions anything derived from the whole directory.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	err := s.DB.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id)
	return id, err
}
