package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
)

// Event is one record of the append-only event log.
type Event struct {
	ID      int64           `json:"id"`
	Kind    string          `json:"kind"`
	Action  string          `json:"action"`
	Key     string          `json:"key"`
	Version int64           `json:"version"`
	Before  json.RawMessage `json:"before"`
	After   json.RawMessage `json:"after"`
	At      string          `json:"at"`
}

// History returns every event for key, oldest first: the row's versions, kept
// even after the row is deleted.
func (s *Store) History(ctx context.Context, key string) ([]Event, error) {
	return s.events(ctx, `WHERE kind = 'DIRECTORY_MUTATE' AND key = ? ORDER BY id`, key)
}

// EventsSince returns up to limit events with id > after, oldest first.
func (s *Store) EventsSince(ctx context.Context, after int64, limit int) ([]Event, error) {
	return s.events(ctx, `WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
}

func (s *Store) events(ctx context.Context, cond string, args ...any) ([]Event, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT id, kind, action, key, version, before, after, at FROM events `+cond, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var e Event
		var before, after sql.NullString
		var version sql.NullInt64
		if err := rows.Scan(&e.ID, &e.Kind, &e.Action, &e.Key, &version, &before, &after, &e.At); err != nil {
			return nil, err
		}
		e.Version = version.Int64
		e.Before, e.After = rawOrNull(before), rawOrNull(after)
		out = append(out, e)
	}
	return out, rows.Err()
}

func rawOrNull(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return json.RawMessage("null")
	}
	return json.RawMessage(s.String)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
