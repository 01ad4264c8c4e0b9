package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/rowcall/rowcall"
)

// History returns every event for key, oldest first: the row's versions, kept
// even after the row is deleted.
func (s *Store) History(ctx context.Context, key string) ([]rowcall.Event, error) {
	return s.events(ctx, `WHERE kind = 'DIRECTORY_MUTATE' AND key = ? ORDER BY id`, key)
}

func (s *Store) events(ctx context.Context, cond string, args ...any) ([]rowcall.Event, error) {
	return queryAll(ctx, s, scanEvent, `SELECT id, kind, action, key, version, before, after, at FROM events `+cond, args...)
}

func scanEvent(sc scanner) (rowcall.Event, error) {
	var e rowcall.Event
	var before, after sql.NullString
	var version sql.NullInt64
	if err := sc.Scan(&e.ID, &e.Kind, &e.Action, &e.Key, &version, &before, &after, &e.At); err != nil {
		return e, err
	}
	e.Version = version.Int64
	e.Before, e.After = snapshot(before), snapshot(after)
	return e, nil
}

// snapshot is a row as an event stored it (the triggers' json_object), with
// the text columns that are stored NULL shown as "", as GET shows the row.
func snapshot(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return json.RawMessage("null")
	}
	return json.RawMessage(nullText.Replace(s.String))
}

// nullText rewrites `"auth":null` to `"auth":""` and so on for each nullable
// text column. The match is exact: json_object writes keys without spaces, and
// inside a JSON string the quote after a key's name would be escaped.
var nullText = func() *strings.Replacer {
	var pairs []string
	for _, c := range []string{"target", "auth", "content", "category", "allowed_categories", "input_schema",
		"output_schema", "examples", "runner", "includes", "created_at", "written_by"} {
		pairs = append(pairs, `"`+c+`":null`, `"`+c+`":""`)
	}
	return strings.NewReplacer(pairs...)
}()
