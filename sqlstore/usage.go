package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/rowcall/rowcall"
)

// Spent sums cost_usd over the receipts of tokenID that started at or after
// since and before before, and over those at or after day (day is not before
// since). Refusals cost nothing, so they add nothing. Receipts still in the
// writer's queue are not counted yet.
func (s *Store) Spent(ctx context.Context, tokenID string, day, since, before time.Time) (dayUSD, sinceUSD float64, err error) {
	err = s.queryRow(ctx, `SELECT COALESCE(SUM(CASE WHEN started_at >= ? THEN cost_usd END), 0), COALESCE(SUM(cost_usd), 0)
		FROM receipts WHERE token_id = ? AND started_at >= ? AND started_at < ?`,
		day.UTC().Format(rowcall.Timestamp), tokenID, since.UTC().Format(rowcall.Timestamp), before.UTC().Format(rowcall.Timestamp)).Scan(&dayUSD, &sinceUSD)
	return dayUSD, sinceUSD, err
}

// Take takes n calls from tokenID's shared count at now, in one statement:
// n slots of its rate bucket (every interval refills one, up to burst;
// interval 0 is no rate) and n of its calls today (callsDay 0 is no count).
// n above 1 is a lease a host spends in process (internal/dispatch). When
// either has fewer than n left it takes nothing and ok is false. tat (the
// bucket's theoretical arrival time, to the microsecond) and calls (today's)
// say where the count stands, after the take when ok.
func (s *Store) Take(ctx context.Context, tokenID string, now time.Time, interval time.Duration, burst int, callsDay int64, n int) (ok bool, tat time.Time, calls int64, err error) {
	us, iv, day := now.UnixMicro(), interval.Microseconds(), now.UTC().Format(time.DateOnly)
	tat, calls, err = s.usage(ctx, tokenID, day, int64(n)*iv, us+int64(n)*iv, n,
		` WHERE (? = 0 OR MAX(tat_us + ?, ?) - ? <= ? * ?) AND (? = 0 OR CASE WHEN day = ? THEN calls ELSE 0 END + ? <= ?)`,
		iv, int64(n)*iv, us+int64(n)*iv, us, burst, iv, callsDay, day, n, callsDay)
	if err == nil {
		return true, tat, calls, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, time.Time{}, 0, err
	}
	var at int64
	var on string
	if err := s.queryRow(ctx, `SELECT tat_us, day, calls FROM token_usage WHERE token_id = ?`, tokenID).Scan(&at, &on, &calls); err != nil {
		return false, time.Time{}, 0, err
	}
	if on != day {
		calls = 0
	}
	return false, time.UnixMicro(at), calls, nil
}

// Count adds n calls that already passed in process to tokenID's shared
// count, whatever it holds: the bucket's arrival time becomes the later of
// its own n intervals on and arrival (where the n calls alone, at the times
// they passed, bring it: a host's in-process bucket started empty), and n
// calls are added to the day's. It returns where the count stands after.
func (s *Store) Count(ctx context.Context, tokenID string, now time.Time, interval time.Duration, n int, arrival time.Time) (tat time.Time, calls int64, err error) {
	return s.usage(ctx, tokenID, now.UTC().Format(time.DateOnly), int64(n)*interval.Microseconds(), arrival.UnixMicro(), n, "")
}

// usage is Take's and Count's one statement: n calls on day move the arrival
// time to MAX(tat_us + add, arrival) when where (an UPSERT's WHERE, with its
// args) holds.
func (s *Store) usage(ctx context.Context, tokenID, day string, add, arrival int64, n int, where string, whereArgs ...any) (time.Time, int64, error) {
	var tat, calls int64
	err := s.queryRow(ctx, `INSERT INTO token_usage (token_id, tat_us, day, calls) VALUES (?, ?, ?, ?)
		ON CONFLICT (token_id) DO UPDATE SET tat_us = MAX(tat_us + ?, ?),
			calls = CASE WHEN day = ? THEN calls + ? ELSE ? END, day = ?`+where+`
		RETURNING tat_us, calls`,
		append([]any{tokenID, arrival, day, n, add, arrival, day, n, n, day}, whereArgs...)...).Scan(&tat, &calls)
	return time.UnixMicro(tat), calls, err
}
