package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/rowcall/rowcall"
)

// Meter is the shared count behind tokens' limits (rowcall.Limits), in the
// database every host shares: sqlstore.Store implements it. Spent sums the
// token's receipts' cost_usd since day and since an earlier time, of receipts
// that started before before; Take takes n calls from the token's rate bucket
// and daily count in one statement, or takes nothing and says where the
// count stands; Count adds n calls that already passed in process, whatever
// the count holds, and says where it stands after.
type Meter interface {
	Spent(ctx context.Context, tokenID string, day, since, before time.Time) (dayUSD, sinceUSD float64, err error)
	Take(ctx context.Context, tokenID string, now time.Time, interval time.Duration, burst int, callsDay int64, n int) (ok bool, tat time.Time, calls int64, err error)
	Count(ctx context.Context, tokenID string, now time.Time, interval time.Duration, n int, arrival time.Time) (tat time.Time, calls int64, err error)
}

// How much of the shared count a host keeps in process (docs/RATIONALE.md,
// "Why are a token's limits leased from the database"):
//
//   - A lease is leaseSlots(limits) calls taken from the shared count in one
//     Take and spent in process: the least of what the rate refills in
//     leaseSpan, a tenth of the burst, a thousandth of calls_day and
//     leaseMax, at least 1. A host holds at most lease−1 unspent calls, so a
//     burst over H hosts can pass the bucket by H×(lease−1) calls; calls a
//     host never spends (it stopped, or the day turned) are refused to
//     everyone: calls_day can fall short by as many, never overshoot.
//   - A lease of 1 because calls_day is under 2,000: every call takes its
//     own slot in one Take, exact across hosts.
//   - A lease of 1 because of the rate (under 20/second or a burst under 20;
//     countsAfter): a call is let through by the in-process bucket alone and
//     counted in the shared count by Count while it runs, in batches, before
//     it is answered; the first call in a process takes its slot with Take.
//     Each Count's answer brings the in-process bucket down to the shared
//     one and holds its refusal, so a host acts on the shared count as of its
//     own last call: calls on other hosts since then are unseen. A burst
//     over H hosts can pass the bucket by (H−1)×burst at most (each host's
//     own bucket), and calls that alternate between hosts by H−1 calls
//     (TestCountedAfterOvershootBound).
//   - A USD budget's spend is read from the receipts (Meter.Spent) on a
//     process's first call and when the day or month turns, plus what this
//     process's own receipts cost since; it is read again, while calls go on
//     with the spend in process, at most every spendFresh, and after every
//     call once it is at least half the cap; a read never lowers the spend
//     this process counted in the same window (endRead). Spend by other
//     hosts since a host's last read is unseen: beyond the calls in flight,
//     a host past half the cap passes it by the calls it lets through before
//     its read after another host's crossing call answers (one, when calls
//     are one at a time).
//   - Inside a call, each paid request (an agent's model request: reserve,
//     rowcall.Purse) is checked against the spend too, which counts what the
//     call trees in flight in this process have paid so far and an estimate
//     per request in flight (the most one request of its price has cost the
//     token here; a token's first request of a price goes out alone). So in
//     one process the cap is passed by less than one request's cost, plus,
//     for each other request then in flight, what it cost beyond its
//     estimate (TestParallelCallsBoundTheBudget).
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

// countsAfter reports whether a token's calls pass on the in-process bucket
// and are counted in the shared count after (Meter.Count): a lease of 1 that
// its rate makes, not calls_day (which stays exact).
func countsAfter(lim rowcall.Limits) bool {
	_, _, rated := lim.Interval()
	return rated && leaseSlots(lim) == 1 && (lim.CallsDay == 0 || lim.CallsDay/1000 > 1)
}

// limiters are a process's view of its tokens' limits: one *meter per token
// (its limits are fixed when it is minted).
type limiters struct{ m sync.Map } // token id → *meter

// meter is one token's limits in this process: the in-process rate bucket
// (golang.org/x/time/rate: a call it refuses is refused without a database
// round trip; one it lets through still needs the shared count and gives
// its slot back when that refuses), the lease of calls taken from the shared
// count or the batch of calls still to count in it, the last refusal of the
// shared count (refused again in process until it ends: the shared count
// only moves on), and the USD spend.
type meter struct {
	local *rate.Limiter // nil without a rate
	k     int           // leaseSlots
	after bool          // countsAfter

	mu       sync.Mutex
	leased   int       // calls taken from the shared count and not yet spent
	leaseDay string    // the UTC day they count in
	until    time.Time // the shared count refused until then,
	tat      time.Time // at this arrival time
	calls    int64     // and this many calls today

	// Counted after (after): the shared count as this process last saw it,
	// and the calls it let through that the count does not hold yet.
	synced    bool      // the shared count was seen (else the next call takes its slot with Take)
	seen      int64     // today's calls in the shared count when last seen,
	seenDay   string    // on this UTC day
	latest    time.Time // the latest call's time (the in-process bucket's clock)
	batch     *batch    // calls let through and not yet being counted
	uncounted int       // calls let through that seen does not hold (batch and the one being counted)
	counting  bool      // a count goroutine is running

	spendMu          sync.Mutex
	read             time.Time // when the spend was last read from the receipts; zero: never
	day, since       time.Time // the windows it was read for
	dayUSD, sinceUSD float64
	reading          bool                     // a read is in flight:
	readGen          int                      // its number (a read's answer counts only if it is the latest),
	readBefore       time.Time                // the receipts it sums started before then (to the millisecond),
	ownDay, ownSince float64                  // and what this process's receipts since then cost
	inflight         float64                  // what paid requests of call trees in flight cost (reserve)
	reserved         float64                  // the estimates their requests in flight hold
	estimates        map[string]float64       // by price: the most one request has cost
	pricing          map[string]chan struct{} // by price: closed once the first request is priced
}

// batch is calls a process let through on its bucket, to be counted in the
// shared count in one Count: n calls, the latest at last, that alone bring
// the bucket's arrival time to arrival. done is closed once they are counted.
type batch struct {
	ctx     context.Context
	n       int
	arrival time.Time
	last    time.Time
	done    chan struct{}
}

func (ms *limiters) get(tok *rowcall.Token) *meter {
	if m, ok := ms.m.Load(tok.ID); ok {
		return m.(*meter)
	}
	m := &meter{k: leaseSlots(tok.Limits), after: countsAfter(tok.Limits)}
	if interval, burst, ok := tok.Limits.Interval(); ok {
		m.local = rate.NewLimiter(rate.Every(interval), burst)
	}
	got, _ := ms.m.LoadOrStore(tok.ID, m)
	return got.(*meter)
}

// meter is the shared count: Meter, or the Store when it is one (nil: none).
func (d *Dispatcher) meter() Meter {
	if d.Meter != nil {
		return d.Meter
	}
	m, _ := d.Store.(Meter)
	return m
}

// limit checks a top-level call against its token's limits, in this order:
// the USD budgets (from receipts), then the rate and the calls per day (taken
// from the shared count only when the budgets allow the call, so a refused
// call uses up nothing). A token without limits costs one comparison. When
// counted is not nil the call passed and is being counted in the shared
// count: it is closed once it is, and the call waits for it before it is
// answered. A call that runs on an approval (approved) is checked against
// the budgets only: the call that asked for the approval took its slot of
// the rate and of calls_day, and an approval lets one call run, so a token
// allowed one call a day can still run the call it asked approval for.
func (d *Dispatcher) limit(ctx context.Context, tok *rowcall.Token, now time.Time, approved bool) (refused *rowcall.Error, counted <-chan struct{}) {
	if tok == nil || !tok.Limits.Any() {
		return nil, nil
	}
	meter := d.meter()
	if meter == nil {
		return unmetered(tok), nil
	}
	m := d.limiters.get(tok)
	if tok.Limits.Budgeted() {
		if e := m.budget(ctx, meter, tok, now); e != nil {
			return e, nil
		}
	}
	if !tok.Limits.Metered() || approved {
		return nil, nil
	}
	giveBack := func() {}
	if m.local != nil {
		local := m.local.ReserveN(now, 1)
		if wait := local.DelayFrom(now); !local.OK() || wait > 0 {
			local.CancelAt(now)
			return rateLimited(tok, wait), nil
		}
		giveBack = func() { local.CancelAt(now) }
	}
	var e *rowcall.Error
	if m.after {
		e, counted = m.pass(ctx, meter, tok, now)
	} else {
		e = m.take(ctx, meter, tok, now)
	}
	if e != nil {
		giveBack()
	}
	return e, counted
}

// budget refuses a call once the token's spend today or this month reaches
// its cap (spent).
func (m *meter) budget(ctx context.Context, meter Meter, tok *rowcall.Token, now time.Time) *rowcall.Error {
	m.spendMu.Lock()
	defer m.spendMu.Unlock()
	if e := m.refresh(ctx, meter, tok, now, true); e != nil {
		return e
	}
	return m.over(tok, now)
}

// refresh reads the token's spend from the receipts: on the first call and
// when the window turns the call waits for the read; else, when again (at
// the gate, not between a call's own requests, whose tree's receipts are
// not stored yet), it is read again, while calls go on with the spend in
// process, at most every spendFresh and after every call once half a cap
// is spent. m.spendMu is held.
func (m *meter) refresh(ctx context.Context, meter Meter, tok *rowcall.Token, now time.Time, again bool) *rowcall.Error {
	lim := tok.Limits
	day, since := rowcall.Day(now), rowcall.Day(now)
	if lim.BudgetUSDMonth > 0 {
		since = rowcall.Month(now)
	}
	if m.read.IsZero() || !m.day.Equal(day) || !m.since.Equal(since) {
		// The first read, or of a new window: the call waits for it.
		gen := m.startRead(now)
		dayUSD, sinceUSD, err := meter.Spent(ctx, tok.ID, day, since, m.readBefore)
		if err != nil {
			m.reading = false
			return meterFailed(tok, err)
		}
		m.endRead(gen, now, day, since, dayUSD, sinceUSD)
		return nil
	}
	dayUSD, sinceUSD := m.spent()
	if half := lim.BudgetUSDDay > 0 && dayUSD*2 >= lim.BudgetUSDDay || lim.BudgetUSDMonth > 0 && sinceUSD*2 >= lim.BudgetUSDMonth; again && !m.reading && (half || now.Sub(m.read) >= spendFresh) {
		// Read again while this call goes on with the spend in process.
		gen := m.startRead(now)
		ctx := context.WithoutCancel(ctx)
		go func() {
			dayUSD, sinceUSD, err := meter.Spent(ctx, tok.ID, day, since, now.Truncate(time.Millisecond))
			m.spendMu.Lock()
			defer m.spendMu.Unlock()
			if err != nil {
				slog.Error("token spend could not be read", "token", tok.ID, "err", err)
				m.reading = false
				return
			}
			m.endRead(gen, now, day, since, dayUSD, sinceUSD)
		}()
	}
	return nil
}

// spent is the token's spend as the budget sees it, today and in the
// budget's longer window: its receipts', plus what calls in flight have
// paid so far and the estimates their requests in flight hold. m.spendMu is
// held.
func (m *meter) spent() (dayUSD, sinceUSD float64) {
	flight := max(m.inflight, 0) + max(m.reserved, 0)
	return m.dayUSD + flight, m.sinceUSD + flight
}

// over is budget_exhausted once the spend has reached a cap. m.spendMu is
// held.
func (m *meter) over(tok *rowcall.Token, now time.Time) *rowcall.Error {
	lim := tok.Limits
	dayUSD, sinceUSD := m.spent()
	if lim.BudgetUSDDay > 0 && dayUSD >= lim.BudgetUSDDay {
		return exhausted("budget_usd_day", usd(dayUSD), usd(lim.BudgetUSDDay), "US dollars today (UTC)", m.day.AddDate(0, 0, 1).Sub(now))
	}
	if lim.BudgetUSDMonth > 0 && sinceUSD >= lim.BudgetUSDMonth {
		return exhausted("budget_usd_month", usd(sinceUSD), usd(lim.BudgetUSDMonth), "US dollars this month (UTC)", m.since.AddDate(0, 1, 0).Sub(now))
	}
	return nil
}

// Reserve implements rowcall.Purse: the call tree's paid requests are
// charged to its payer's budget (reserve).
func (p parented) Reserve(ctx context.Context, price string) (paid func(costUSD float64), refused *rowcall.Error) {
	return p.d.reserve(ctx, p.call, price)
}

// reserve lets one paid request of c's tree go out while its payer's spend
// (spent) is under its caps, holding the estimate of what a request priced
// by price costs (the most one has cost this token in this process) until
// paid says what it cost: that cost then counts as spent by a call in
// flight, until the tree's top-level receipt counts it (spend). A token's
// first request of a price goes out alone: the others wait until it is
// priced, so no request goes out without an estimate but the first.
func (d *Dispatcher) reserve(ctx context.Context, c *call, price string) (func(costUSD float64), *rowcall.Error) {
	tok := c.payer
	if tok == nil || !tok.Limits.Budgeted() {
		return func(float64) {}, nil
	}
	meter := d.meter()
	if meter == nil {
		return nil, unmetered(tok)
	}
	m := d.limiters.get(tok)
	for {
		now := d.now()
		m.spendMu.Lock()
		e := m.refresh(ctx, meter, tok, now, false)
		if e == nil {
			e = m.over(tok, now)
		}
		if e != nil {
			m.spendMu.Unlock()
			return nil, e
		}
		est, first := m.estimates[price], false
		if price != "" && est == 0 {
			if wait := m.pricing[price]; wait != nil {
				m.spendMu.Unlock()
				select {
				case <-wait:
					continue
				case <-ctx.Done():
					return func(float64) {}, nil // the request fails at once: nothing to hold
				}
			}
			if m.pricing == nil {
				m.pricing, m.estimates = map[string]chan struct{}{}, map[string]float64{}
			}
			m.pricing[price], first = make(chan struct{}), true
		}
		m.reserved += est
		m.spendMu.Unlock()
		return func(cost float64) {
			m.spendMu.Lock()
			defer m.spendMu.Unlock()
			m.reserved -= est
			m.inflight += cost
			c.live += cost
			if price != "" && cost > m.estimates[price] {
				m.estimates[price] = cost
			}
			if first {
				close(m.pricing[price])
				delete(m.pricing, price)
			}
		}, nil
	}
}

// startRead begins a read of the spend of receipts started before now's
// millisecond: this process's receipts from then on are added to its answer
// (endRead). m.spendMu is held.
func (m *meter) startRead(now time.Time) int {
	m.readGen++
	m.reading, m.readBefore, m.ownDay, m.ownSince = true, now.Truncate(time.Millisecond), 0, 0
	return m.readGen
}

// endRead takes a read's answer as the spend, plus this process's receipts
// since it began, unless a later read began since. In the window the spend
// already held, a read never lowers it: the sum can miss a receipt this
// process counted (one started in the millisecond the read began, before it
// began, or one not yet stored when the sum was taken), and it never counts
// one twice, so the larger of the two is the nearer. m.spendMu is held.
func (m *meter) endRead(gen int, now, day, since time.Time, dayUSD, sinceUSD float64) {
	if gen != m.readGen {
		return
	}
	dayUSD, sinceUSD = dayUSD+m.ownDay, sinceUSD+m.ownSince
	if !m.read.IsZero() && m.day.Equal(day) && m.since.Equal(since) {
		dayUSD, sinceUSD = max(dayUSD, m.dayUSD), max(sinceUSD, m.sinceUSD)
	}
	m.reading = false
	m.read, m.day, m.since, m.dayUSD, m.sinceUSD = now, day, since, dayUSD, sinceUSD
}

// spend adds a receipt of c's tree to its payer's spend in this process, so
// the budget sees what this host's calls cost before the next read; the
// top-level receipt's takes the place of what the tree's paid requests
// counted while it was in flight (reserve).
func (d *Dispatcher) spend(c *call, costUSD float64, at time.Time, top bool) {
	tok := c.payer
	if !tok.Limits.Budgeted() {
		return
	}
	m := d.limiters.get(tok)
	m.spendMu.Lock()
	defer m.spendMu.Unlock()
	if top {
		m.inflight -= c.live
		c.live = 0
	}
	if costUSD == 0 || m.read.IsZero() {
		return
	}
	unread := m.reading && !at.Truncate(time.Millisecond).Before(m.readBefore) // the read in flight does not sum it
	if !at.Before(m.day) {
		m.dayUSD += costUSD
		if unread {
			m.ownDay += costUSD
		}
	}
	if !at.Before(m.since) {
		m.sinceUSD += costUSD
		if unread {
			m.ownSince += costUSD
		}
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
	if m.k == 1 {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	if ok {
		if m.after {
			m.synced = true
			m.saw(tok, now, tat, calls)
		}
		return nil
	}
	m.refusedUntil(tok, now, tat, calls)
	return sharedRefusal(tok, now, tat, calls)
}

// refusedUntil holds a refusal of the shared count at tat and calls in
// process until it ends. m.mu is held.
func (m *meter) refusedUntil(tok *rowcall.Token, now, tat time.Time, calls int64) {
	interval, burst, _ := tok.Limits.Interval()
	until := tat.Add(-time.Duration(burst-1) * interval) // the bucket has a slot again
	if tok.Limits.CallsDay > 0 && calls >= tok.Limits.CallsDay {
		until = rowcall.Day(now).AddDate(0, 0, 1)
	}
	m.until, m.tat, m.calls = until, tat, calls
}

// pass lets a call through on the in-process bucket (which has taken its
// slot) and queues it to be counted in the shared count (countsAfter); the
// first call in the process, or the first after a count failed, takes its
// slot with Take instead.
func (m *meter) pass(ctx context.Context, meter Meter, tok *rowcall.Token, now time.Time) (*rowcall.Error, <-chan struct{}) {
	m.mu.Lock()
	if now.Before(m.until) {
		tat, calls := m.tat, m.calls
		m.mu.Unlock()
		return sharedRefusal(tok, now, tat, calls), nil
	}
	if !m.synced {
		m.mu.Unlock()
		return m.shared(ctx, meter, tok, now, 1), nil
	}
	if lim := tok.Limits; lim.CallsDay > 0 {
		seen := m.seen
		if m.seenDay != now.UTC().Format(time.DateOnly) {
			seen = 0
		}
		if calls := seen + int64(m.uncounted); calls >= lim.CallsDay {
			m.mu.Unlock()
			return exhausted("calls_day", strconv.FormatInt(calls, 10), strconv.FormatInt(lim.CallsDay, 10), "calls today (UTC)",
				rowcall.Day(now).AddDate(0, 0, 1).Sub(now)), nil
		}
	}
	interval, _, _ := tok.Limits.Interval()
	b := m.batch
	if b == nil {
		b = &batch{done: make(chan struct{})}
		m.batch = b
	}
	b.ctx, b.n, b.arrival = context.WithoutCancel(ctx), b.n+1, later(b.arrival, now).Add(interval)
	b.last, m.latest = later(b.last, now), later(m.latest, now)
	m.uncounted++
	start := !m.counting
	m.counting = true
	m.mu.Unlock()
	if start {
		go m.count(meter, tok)
	}
	return nil, b.done
}

// count counts the batches of calls let through in the shared count, one
// Count each, until none is left. A failed count goes back in front of the
// next batch, and the next call takes its slot with Take (failing closed
// while the database does).
func (m *meter) count(meter Meter, tok *rowcall.Token) {
	interval, _, _ := tok.Limits.Interval()
	m.mu.Lock()
	defer m.mu.Unlock()
	for m.batch != nil {
		b := m.batch
		m.batch = nil
		m.mu.Unlock()
		tat, calls, err := meter.Count(b.ctx, tok.ID, b.last, interval, b.n, b.arrival)
		m.mu.Lock()
		if err != nil {
			slog.Error("token calls could not be counted", "token", tok.ID, "calls", b.n, "err", err)
			if next := m.batch; next != nil { // b's calls came first
				b.ctx, b.n, b.last, b.done = next.ctx, b.n+next.n, next.last, next.done
				b.arrival = later(b.arrival.Add(time.Duration(next.n)*interval), next.arrival)
			} else {
				close(b.done)
				b.done = make(chan struct{})
			}
			m.batch, m.synced, m.counting = b, false, false
			return
		}
		m.uncounted -= b.n
		m.saw(tok, b.last, tat, calls)
		close(b.done)
	}
	m.counting = false
}

// saw brings the process's view to the shared count's answer at now (tat,
// and today's calls, this process's counted ones included): the in-process
// bucket keeps no more slots than the shared one has, less the calls not
// yet counted, and a spent count is refused until it has a slot again.
// m.mu is held.
func (m *meter) saw(tok *rowcall.Token, now, tat time.Time, calls int64) {
	m.seen, m.seenDay = calls, now.UTC().Format(time.DateOnly)
	interval, burst, _ := tok.Limits.Interval()
	at := later(m.latest, now)
	free := float64(burst) - float64(tat.Sub(at))/float64(interval) - float64(m.uncounted)
	if extra := int(math.Min(m.local.TokensAt(at)-max(free, 0), float64(burst)) + 1e-6); extra > 0 { // whole slots
		m.local.ReserveN(at, extra)
	}
	if tat.Sub(now) > time.Duration(burst-1)*interval || tok.Limits.CallsDay > 0 && calls >= tok.Limits.CallsDay {
		m.refusedUntil(tok, now, tat, calls)
	}
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
// budget's window ends; field is the limit's name where a token is minted
// (budget_usd_day, calls_day), and the answer's "budget" that name without
// "budget_".
func exhausted(field, spent, limit, what string, wait time.Duration) *rowcall.Error {
	budget := strings.TrimPrefix(field, "budget_")
	e := refuse(rowcall.EBudgetExhausted, []string{spent, limit}, "this token's "+field+" is spent: "+spent+" of "+limit+" "+what,
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
