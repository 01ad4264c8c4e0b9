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

// Take takes n calls from tokenID's shared count at now, in one statement:
// n slots of its rate bucket (every interval refills one, up to burst;
// interval 0 is no rate) and n of its calls today (callsDay 0 is no count).
// n above 1 is a lease a host spends in process (internal/dispatch). When
// either has fewer than n left it takes nothing and ok is false; tat (the
// bucket's theoretical arrival time) and calls (today's) then say where the
// count stands.
func (s *Store) Take(ctx context.Context, tokenID string, now time.Time, interval time.Duration, burst int, callsDay int64, n int) (ok bool, tat time.Time, calls int64, err error) {
	ms, iv, day := now.UnixMilli(), interval.Milliseconds(), now.UTC().Format(time.DateOnly)
	take := int64(n) * iv
	var got int64
	err = s.queryRow(ctx, `INSERT INTO token_usage (token_id, tat_ms, day, calls) VALUES (?, ?, ?, ?)
		ON CONFLICT (token_id) DO UPDATE SET tat_ms = MAX(tat_ms, ?) + ?,
			calls = CASE WHEN day = ? THEN calls + ? ELSE ? END, day = ?
		WHERE (? = 0 OR MAX(tat_ms, ?) + ? - ? <= ? * ?) AND (? = 0 OR CASE WHEN day = ? THEN calls ELSE 0 END + ? <= ?)
		RETURNING tat_ms`,
		tokenID, ms+take, day, n,
		ms, take,
		day, n, n, day,
		iv, ms, take, ms, burst, iv, callsDay, day, n, callsDay).Scan(&got)
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
