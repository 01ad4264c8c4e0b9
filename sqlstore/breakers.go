package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/rowcall/rowcall"
)

// RecordAuth records one upstream answer for key's breaker: an auth failure
// (401/403) counts, opening the breaker at the threshold (or re-opening it after
// a cooldown); any other answer closes it.
func (s *Store) RecordAuth(ctx context.Context, key string, failed bool, now time.Time) error {
	ts := now.UTC().Format(rowcall.Timestamp)
	if !failed {
		_, err := s.DB.ExecContext(ctx, `DELETE FROM breakers WHERE key = ?`, key)
		return err
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO breakers (key, failures, opened_at, updated_at) VALUES (?, 1, NULL, ?)
		ON CONFLICT (key) DO UPDATE SET failures = failures + 1,
			opened_at = CASE WHEN failures + 1 >= ? THEN ? ELSE opened_at END, updated_at = ?`,
		key, ts, rowcall.BreakerThreshold, ts, ts)
	return err
}

// ClearBreaker closes key's breaker (the owner replaced the credential). It
// reports whether there was anything to clear.
func (s *Store) ClearBreaker(ctx context.Context, key string) (bool, error) {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM breakers WHERE key = ?`, key)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// KeyCategories returns every row's key and category only (for did_you_mean
// and scope checks).
func (s *Store) KeyCategories(ctx context.Context) ([]rowcall.Row, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT key, COALESCE(category, '') FROM directory`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []rowcall.Row
	for rows.Next() {
		var r rowcall.Row
		if err := rows.Scan(&r.Key, &r.Category); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Breaker returns key's consecutive auth failures and when its breaker opened
// (zero when it is closed).
func (s *Store) Breaker(ctx context.Context, key string) (failures int, opened time.Time, err error) {
	var at sql.NullString
	err = s.queryRow(ctx, `SELECT failures, opened_at FROM breakers WHERE key = ?`, key).Scan(&failures, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, time.Time{}, nil
	}
	if err != nil || !at.Valid {
		return failures, time.Time{}, err
	}
	opened, err = time.Parse(rowcall.Timestamp, at.String)
	return failures, opened, err
}

// lastEventSQL is the newest id of an event that is not a vector's (0 when
// there is none; the partial index events_directory makes it one seek).
const lastEventSQL = `(SELECT COALESCE(MAX(id), 0) FROM events WHERE kind <> 'VECTOR')`

// LastEvent is the newest event id but the vectors': every change to a row,
// a module or a breaker moves it (by trigger, whoever made the change), so
// anything read from them stays valid while it does not. Embedding a row
// (the vectors table's own VECTOR events) does not move it.
func (s *Store) LastEvent(ctx context.Context) (int64, error) {
	var id int64
	err := s.queryRow(ctx, `SELECT `+lastEventSQL).Scan(&id)
	return id, err
}

// NewestEvent is the newest event id of all, the vectors' included: what an
// in-memory vector index follows (vectors.Table), to see another host's
// vectors.
func (s *Store) NewestEvent(ctx context.Context) (int64, error) {
	var id int64
	err := s.queryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id)
	return id, err
}
