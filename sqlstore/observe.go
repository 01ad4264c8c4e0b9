package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/rowcall/rowcall"
)

// Group is one group commit of the receipt writer, as an observer sees it:
// its receipts, whether each was stored (Err nil) or not, how long the
// signing and INSERTs took, and how long each receipt had waited for the
// writer by the time it was stored (from Append: queued behind the group
// before, gathered, signed and written) — what its caller waits before it is
// answered, past the call itself.
type Group struct {
	Receipts []rowcall.Receipt
	Errs     []error
	Took     time.Duration
	Waited   []time.Duration
}

// Observe has the writer call f after every group it writes (metrics,
// traces): f runs on the writer goroutine, so it must be quick; nil stops it.
func (l *ReceiptLog) Observe(f func(Group)) {
	if f == nil {
		l.observer.Store(nil)
		return
	}
	l.observer.Store(&f)
}

func (l *ReceiptLog) observed(group []pending, took time.Duration) {
	f := l.observer.Load()
	if f == nil {
		return
	}
	now := time.Now()
	g := Group{Receipts: make([]rowcall.Receipt, len(group)), Errs: make([]error, len(group)), Took: took, Waited: make([]time.Duration, len(group))}
	for i := range group {
		g.Receipts[i], g.Errs[i], g.Waited[i] = group[i].rc, group[i].err, now.Sub(group[i].queued)
	}
	(*f)(g)
}

// BreakerState is one row's breaker: its consecutive auth failures and
// whether it is open (opened less than rowcall.BreakerCooldown ago).
type BreakerState struct {
	Key      string
	Failures int
	Open     bool
}

// BreakerStates lists every breaker with a failure on record, as of now.
func (s *Store) BreakerStates(ctx context.Context, now time.Time) ([]BreakerState, error) {
	return queryAll(ctx, s, func(sc scanner) (BreakerState, error) {
		var b BreakerState
		var opened sql.NullString
		err := sc.Scan(&b.Key, &b.Failures, &opened)
		if at, perr := time.Parse(rowcall.Timestamp, opened.String); opened.Valid && perr == nil {
			b.Open = now.Before(at.Add(rowcall.BreakerCooldown))
		}
		return b, err
	}, `SELECT key, failures, opened_at FROM breakers ORDER BY key`)
}
