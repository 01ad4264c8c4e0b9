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
// one call from the token's rate bucket and daily count in one statement, or
// takes nothing and says where the count stands.
type Meter interface {
	Spent(ctx context.Context, tokenID string, day, since time.Time) (dayUSD, sinceUSD float64, err error)
	Take(ctx context.Context, tokenID string, now time.Time, interval time.Duration, burst int, callsDay int64) (ok bool, tat time.Time, calls int64, err error)
}

// limiters are the in-process rate buckets, one per token and rate
// (golang.org/x/time/rate): a call this process's bucket refuses is refused
// without a database round trip; one it lets through still needs the shared
// count (Meter.Take), and gives its slot back when that refuses.
type limiters struct{ m sync.Map } // token id + "\x00" + rate → *rate.Limiter

func (ls *limiters) get(tok *rowcall.Token, interval time.Duration, burst int) *rate.Limiter {
	k := tok.ID + "\x00" + tok.Rate + "\x00" + strconv.Itoa(burst)
	if l, ok := ls.m.Load(k); ok {
		return l.(*rate.Limiter)
	}
	l, _ := ls.m.LoadOrStore(k, rate.NewLimiter(rate.Every(interval), burst))
	return l.(*rate.Limiter)
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
	lim := tok.Limits
	if lim.Budgeted() {
		if meter == nil {
			return unmetered(tok)
		}
		day, since := rowcall.Day(now), rowcall.Day(now)
		if lim.BudgetUSDMonth > 0 {
			since = rowcall.Month(now)
		}
		dayUSD, monthUSD, err := meter.Spent(ctx, tok.ID, day, since)
		if err != nil {
			return meterFailed(tok, err)
		}
		if lim.BudgetUSDDay > 0 && dayUSD >= lim.BudgetUSDDay {
			return exhausted("usd_day", usd(dayUSD), usd(lim.BudgetUSDDay), "US dollars today (UTC)", day.AddDate(0, 0, 1).Sub(now))
		}
		if lim.BudgetUSDMonth > 0 && monthUSD >= lim.BudgetUSDMonth {
			return exhausted("usd_month", usd(monthUSD), usd(lim.BudgetUSDMonth), "US dollars this month (UTC)", since.AddDate(0, 1, 0).Sub(now))
		}
	}
	if !lim.Metered() {
		return nil
	}
	interval, burst, hasRate := lim.Interval()
	giveBack := func() {}
	if hasRate {
		local := d.limiters.get(tok, interval, burst).ReserveN(now, 1)
		if wait := local.DelayFrom(now); !local.OK() || wait > 0 {
			local.CancelAt(now)
			return rateLimited(tok, wait)
		}
		giveBack = func() { local.CancelAt(now) }
	}
	if meter == nil {
		return unmetered(tok)
	}
	ok, tat, calls, err := meter.Take(ctx, tok.ID, now, interval, burst, lim.CallsDay)
	if err != nil {
		giveBack()
		return meterFailed(tok, err)
	}
	if ok {
		return nil
	}
	giveBack()
	if lim.CallsDay > 0 && calls >= lim.CallsDay {
		return exhausted("calls_day", strconv.FormatInt(calls, 10), strconv.FormatInt(lim.CallsDay, 10), "calls today (UTC)",
			rowcall.Day(now).AddDate(0, 0, 1).Sub(now))
	}
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
