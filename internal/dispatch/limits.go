package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/rowcall/rowcall"
)

// Meter is the shared count behind tokens' limits (rowcall.Limits), in the
// database every host shares: sqlstore.Store implements it. Spent sums the
// token's receipts' cost_usd since day and since an earlier time; Take takes
// n calls from the token's rate bucket and daily count in one statement, or
// takes nothing and says where the count stands.
type Meter interface {
	Spent(ctx context.Context, tokenID string, day, since time.Time) (dayUSD, sinceUSD float64, err error)
	Take(ctx context.Context, tokenID string, now time.Time, interval time.Duration, burst int, callsDay int64, n int) (ok bool, tat time.Time, calls int64, err error)
}

// How much of the shared count a host keeps in process (docs/RATIONALE.md,
// "Why are a token's limits leased from the database"):
//
//   - A lease is leaseSlots(limits) calls taken from the shared count in one
//     Take and spent in process: the least of what the rate refills in
//     leaseSpan, a tenth of the burst, a thousandth of calls_day and
//     leaseMax, at least 1. So every call takes its own (exact across hosts)
//     for a rate under 20/second, a burst under 20 or calls_day under 2000.
//     A host holds at most lease−1 unspent calls, so a burst over H hosts can
//     pass the bucket by H×(lease−1) calls; calls a host never spends (it
//     stopped, or the day turned) are refused to everyone: calls_day can fall
//     short by as many, never overshoot.
//   - A USD budget's spend is read from the receipts (Meter.Spent) at most
//     every spendFresh, plus what this process's own receipts cost since; it
//     is read on every call once it is at least half the cap. Spend by other
//     hosts in the last spendFresh is unseen, so beyond the calls in flight a
//     budget is overshot only when other hosts spend more than half its cap
//     within spendFresh.
const (
	leaseSpan  = 100 * time.Millisecond
	leaseMax   = 1000
	spendFresh = time.Second
)

// leaseSlots is how many calls a host takes from the shared count at a time.
func leaseSlots(lim rowcall.Limits) int {
	k := leaseMax
	if interval, burst, ok := lim.Interval(); ok {
		k = min(k, int(leaseSpan/interval), burst/10)
	}
	if lim.CallsDay > 0 {
		k = min(k, int(min(lim.CallsDay/1000, leaseMax)))
	}
	return max(k, 1)
}

// limiters are a process's view of its tokens' limits: one *meter per token
// (its limits are fixed when it is minted).
type limiters struct{ m sync.Map } // token id → *meter

// meter is one token's limits in this process: the in-process rate bucket
// (golang.org/x/time/rate: a call it refuses is refused without a database
// round trip; one it lets through still needs the shared count and gives
// its slot back when that refuses), the lease of calls taken from the shared
// count, the last refusal of the shared count (refused again in process until
// it ends: the shared count only moves on), and the USD spend.
type meter struct {
	local *rate.Limiter // nil without a rate
	k     int           // leaseSlots

	mu       sync.Mutex
	leased   int       // calls taken from the shared count and not yet spent
	leaseDay string    // the UTC day they count in
	until    time.Time // the shared count refused until then,
	tat      time.Time // at this arrival time
	calls    int64     // and this many calls today

	spendMu          sync.Mutex
	read             time.Time // when the spend was last read from the receipts; zero: never
	day, since       time.Time // the windows it was read for
	dayUSD, sinceUSD float64
}

func (ms *limiters) get(tok *rowcall.Token) *meter {
	if m, ok := ms.m.Load(tok.ID); ok {
		return m.(*meter)
	}
	m := &meter{k: leaseSlots(tok.Limits)}
	if interval, burst, ok := tok.Limits.Interval(); ok {
		m.local = rate.NewLimiter(rate.Every(interval), burst)
	}
	got, _ := ms.m.LoadOrStore(tok.ID, m)
	return got.(*meter)
}

// limit checks a top-level call against its token's limits, in this order:
// the USD budgets (from receipts), then the rate and the calls per day (taken
// from the shared count only when the budgets allow the call, so a refused
// call uses up nothing). A token without limits costs one comparison.
func (d *Dispatcher) limit(ctx context.Context, tok *rowcall.Token, now time.Time) *rowcall.Error {
	if tok == nil || !tok.Limits.Any() {
		return nil
	}
	meter := d.Meter
	if meter == nil {
		meter, _ = d.Store.(Meter)
	}
	if meter == nil {
		return unmetered(tok)
	}
	m := d.limiters.get(tok)
	if tok.Limits.Budgeted() {
		if e := m.budget(ctx, meter, tok, now); e != nil {
			return e
		}
	}
	if !tok.Limits.Metered() {
		return nil
	}
	giveBack := func() {}
	if m.local != nil {
		local := m.local.ReserveN(now, 1)
		if wait := local.DelayFrom(now); !local.OK() || wait > 0 {
			local.CancelAt(now)
			return rateLimited(tok, wait)
		}
		giveBack = func() { local.CancelAt(now) }
	}
	e := m.take(ctx, meter, tok, now)
	if e != nil {
		giveBack()
	}
	return e
}

// budget refuses a call once the token's spend today or this month reaches
// its cap.
func (m *meter) budget(ctx context.Context, meter Meter, tok *rowcall.Token, now time.Time) *rowcall.Error {
	lim := tok.Limits
	day, since := rowcall.Day(now), rowcall.Day(now)
	if lim.BudgetUSDMonth > 0 {
		since = rowcall.Month(now)
	}
	m.spendMu.Lock()
	defer m.spendMu.Unlock()
	half := lim.BudgetUSDDay > 0 && m.dayUSD*2 >= lim.BudgetUSDDay || lim.BudgetUSDMonth > 0 && m.sinceUSD*2 >= lim.BudgetUSDMonth
	if m.read.IsZero() || half || now.Sub(m.read) >= spendFresh || !m.day.Equal(day) || !m.since.Equal(since) {
		dayUSD, sinceUSD, err := meter.Spent(ctx, tok.ID, day, since)
		if err != nil {
			return meterFailed(tok, err)
		}
		m.read, m.day, m.since, m.dayUSD, m.sinceUSD = now, day, since, dayUSD, sinceUSD
	}
	if lim.BudgetUSDDay > 0 && m.dayUSD >= lim.BudgetUSDDay {
		return exhausted("usd_day", usd(m.dayUSD), usd(lim.BudgetUSDDay), "US dollars today (UTC)", day.AddDate(0, 0, 1).Sub(now))
	}
	if lim.BudgetUSDMonth > 0 && m.sinceUSD >= lim.BudgetUSDMonth {
		return exhausted("usd_month", usd(m.sinceUSD), usd(lim.BudgetUSDMonth), "US dollars this month (UTC)", since.AddDate(0, 1, 0).Sub(now))
	}
	return nil
}

// spend adds a receipt's cost to its token's spend in this process, so the
// budget sees what this host's calls cost before the next read.
func (d *Dispatcher) spend(tok *rowcall.Token, costUSD float64, at time.Time) {
	if tok == nil || costUSD == 0 || !tok.Limits.Budgeted() {
		return
	}
	m := d.limiters.get(tok)
	m.spendMu.Lock()
	defer m.spendMu.Unlock()
	if !m.read.IsZero() && !at.Before(m.day) {
		m.dayUSD += costUSD
	}
	if !m.read.IsZero() && !at.Before(m.since) {
		m.sinceUSD += costUSD
	}
}

// take spends one call of the lease, taking a new lease from the shared
// count when it is spent (or of another day); with a lease of 1 every call
// takes its own. A refusal of the shared count holds in process until it
// ends: the bucket's arrival time and the day's calls only grow.
func (m *meter) take(ctx context.Context, meter Meter, tok *rowcall.Token, now time.Time) *rowcall.Error {
	m.mu.Lock()
	if now.Before(m.until) {
		tat, calls := m.tat, m.calls
		m.mu.Unlock()
		return sharedRefusal(tok, now, tat, calls)
	}
	if m.k == 1 {
		m.mu.Unlock() // no lease to guard: calls on one token take their slots side by side
		return m.shared(ctx, meter, tok, now, 1)
	}
	defer m.mu.Unlock()
	if day := now.UTC().Format(time.DateOnly); m.leaseDay != day {
		m.leased, m.leaseDay = 0, day // yesterday's calls count no more
	}
	if m.leased > 0 {
		m.leased--
		return nil
	}
	interval, burst, _ := tok.Limits.Interval()
	ok, _, _, err := meter.Take(ctx, tok.ID, now, interval, burst, tok.Limits.CallsDay, m.k)
	switch {
	case err != nil:
		return meterFailed(tok, err)
	case ok:
		m.leased = m.k - 1
		return nil
	}
	return m.shared(ctx, meter, tok, now, 1) // fewer than a lease left: one call at a time
}

// shared takes n calls from the shared count for this call, and remembers
// its refusal. m.mu is held when n > 1.
func (m *meter) shared(ctx context.Context, meter Meter, tok *rowcall.Token, now time.Time, n int) *rowcall.Error {
	interval, burst, _ := tok.Limits.Interval()
	ok, tat, calls, err := meter.Take(ctx, tok.ID, now, interval, burst, tok.Limits.CallsDay, n)
	if err != nil {
		return meterFailed(tok, err)
	}
	if ok {
		return nil
	}
	until := tat.Add(-time.Duration(burst-1) * interval) // the bucket has a slot again
	if tok.Limits.CallsDay > 0 && calls >= tok.Limits.CallsDay {
		until = rowcall.Day(now).AddDate(0, 0, 1)
	}
	if m.k == 1 {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	m.until, m.tat, m.calls = until, tat, calls
	return sharedRefusal(tok, now, tat, calls)
}

// sharedRefusal is the shared count's refusal at tat and calls: calls_day's
// when today's calls are used up, else the rate's.
func sharedRefusal(tok *rowcall.Token, now, tat time.Time, calls int64) *rowcall.Error {
	lim := tok.Limits
	if lim.CallsDay > 0 && calls >= lim.CallsDay {
		return exhausted("calls_day", strconv.FormatInt(calls, 10), strconv.FormatInt(lim.CallsDay, 10), "calls today (UTC)",
			rowcall.Day(now).AddDate(0, 0, 1).Sub(now))
	}
	interval, burst, _ := lim.Interval()
	// The bucket is full again once tat is at most burst-1 intervals ahead.
	return rateLimited(tok, tat.Add(-time.Duration(burst-1)*interval).Sub(now))
}

// rateLimited is rate_limited:<n>/<window> with the seconds until a slot is
// free (Retry-After).
func rateLimited(tok *rowcall.Token, wait time.Duration) *rowcall.Error {
	e := refuse(rowcall.ERateLimited, []string{tok.Rate}, "this token may make "+tok.Rate+" calls (burst "+
		strconv.Itoa(burstOf(tok))+"); the next one is allowed in "+strconv.Itoa(retryAfter(wait))+" s",
		"wait for Retry-After seconds, or ask the owner for a token with a higher rate")
	e.Extra["retry_after"] = retryAfter(wait)
	return e
}

// exhausted is budget_exhausted:<spent>>=<cap> with the seconds until the
// budget's window ends.
func exhausted(budget, spent, limit, what string, wait time.Duration) *rowcall.Error {
	e := refuse(rowcall.EBudgetExhausted, []string{spent, limit}, "this token's budget_"+budget+" is spent: "+spent+" of "+limit+" "+what,
		"wait for the budget's window to end (Retry-After seconds), or ask the owner for a token with a larger budget")
	e.Extra["budget"] = budget
	e.Extra["retry_after"] = retryAfter(wait)
	return e
}

func burstOf(tok *rowcall.Token) int {
	_, b, _ := tok.Limits.Interval()
	return b
}

// retryAfter is a wait in whole seconds, at least 1 (Retry-After's unit).
func retryAfter(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}

// usd renders an amount of dollars to the micro-dollar, without trailing
// zeros (0.0123, 5): a sum of float costs reads as the amount, not as
// 0.30000000000000004.
func usd(v float64) string { return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64) }

// meterFailed fails closed: a limit that cannot be checked refuses the call.
func meterFailed(tok *rowcall.Token, err error) *rowcall.Error {
	slog.Error("token limits could not be checked", "token", tok.ID, "err", err)
	e := refuse(rowcall.EInternal, nil, "this token's limits could not be checked, so the call was not made; the host's log has the cause", "try again")
	e.Status = 503
	return e
}

func unmetered(tok *rowcall.Token) *rowcall.Error {
	return meterFailed(tok, errors.New("the dispatcher has no Meter and its Store is not one"))
}
