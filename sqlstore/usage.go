package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/rowcall/rowcall"
)

// Spent sums cost_usd over the receipts of tokenID that started at or after
// since, and over those at or after day (day is not before since). Refusals
// cost nothing, so they add nothing. Receipts still in the writer's queue are
// not counted yet.
func (s *Store) Spent(ctx context.Context, tokenID string, day, since time.Time) (dayUSD, sinceUSD float64, err error) {
	err = s.queryRow(ctx, `SELECT COALESCE(SUM(CASE WHEN started_at >= ? THEN cost_usd END), 0), COALESCE(SUM(cost_usd), 0)
		FROM receipts WHERE token_id = ? AND started_at >= ?`,
		day.UTC().Format(rowcall.Timestamp), tokenID, since.UTC().Format(rowcall.Timestamp)).Scan(&dayUSD, &sinceUSD)
	return dayUSD, sinceUSD, err
}

// Take takes one call from tokenID's shared count at now, in one statement:
// a slot of its rate bucket (every interval refills one, up to burst; interval
// 0 is no rate) and one of its calls today (callsDay 0 is no count). When
// either is used up it takes nothing and ok is false; tat (the bucket's
// theoretical arrival time) and calls (today's) then say which.
func (s *Store) Take(ctx context.Context, tokenID string, now time.Time, interval time.Duration, burst int, callsDay int64) (ok bool, tat time.Time, calls int64, err error) {
	ms, iv, day := now.UnixMilli(), interval.Milliseconds(), now.UTC().Format(time.DateOnly)
	var got int64
	err = s.queryRow(ctx, `INSERT INTO token_usage (token_id, tat_ms, day, calls) VALUES (?, ?, ?, 1)
		ON CONFLICT (token_id) DO UPDATE SET tat_ms = MAX(tat_ms, ?) + ?,
			calls = CASE WHEN day = ? THEN calls + 1 ELSE 1 END, day = ?
		WHERE (? = 0 OR MAX(tat_ms, ?) + ? - ? <= ? * ?) AND (? = 0 OR day <> ? OR calls < ?)
		RETURNING tat_ms`,
		tokenID, ms+iv, day,
		ms, iv,
		day, day,
		iv, ms, iv, ms, burst, iv, callsDay, day, callsDay).Scan(&got)
	if err == nil {
		return true, time.UnixMilli(got), 0, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, time.Time{}, 0, err
	}
	var at int64
	var on string
	if err := s.queryRow(ctx, `SELECT tat_ms, day, calls FROM token_usage WHERE token_id = ?`, tokenID).Scan(&at, &on, &calls); err != nil {
		return false, time.Time{}, 0, err
	}
	if on != day {
		calls = 0
	}
	return false, time.UnixMilli(at), calls, nil
}
