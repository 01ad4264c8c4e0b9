package rowcall

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Limits are a token's rate and budgets, set when it is minted and checked at
// the gate for every top-level call the token makes (internal/dispatch):
//
//   - Rate "N/second", "N/minute" or "N/hour" with Burst (N when 0): a token
//     bucket of Burst calls refilled one per window/N. Refused as
//     rate_limited:N/window.
//   - BudgetUSDDay, BudgetUSDMonth: the sum of cost_usd over the token's
//     receipts in the current UTC day or month. A call is refused once the
//     sum reaches the cap, as budget_exhausted:<spent>>=<cap>; so is each
//     model request inside a call (what calls in flight paid so far and the
//     estimates their requests in flight hold count as spent).
//   - CallsDay: top-level calls that passed the gate in the current UTC day,
//     refused the same way.
//
// The zero value has no limits.
type Limits struct {
	Rate           string  `json:"rate,omitempty"`
	Burst          int     `json:"burst,omitempty"`
	BudgetUSDDay   float64 `json:"budget_usd_day,omitempty"`
	BudgetUSDMonth float64 `json:"budget_usd_month,omitempty"`
	CallsDay       int64   `json:"calls_day,omitempty"`
}

// Limit refusal codes. rate_limited's arg is the token's rate as minted
// (rate_limited:2/minute); budget_exhausted's are the spent amount and the cap
// (budget_exhausted:5.02>=5).
const (
	ERateLimited     Code = "rate_limited"
	EBudgetExhausted Code = "budget_exhausted"
)

// rateWindows are the windows a rate may name.
var rateWindows = map[string]time.Duration{"second": time.Second, "minute": time.Minute, "hour": time.Hour}

// Any reports whether l limits anything.
func (l Limits) Any() bool { return l != Limits{} }

// Metered reports whether l has a rate or a calls-per-day count: the limits
// every call consumes from (the budgets are read from receipts instead).
func (l Limits) Metered() bool { return l.Rate != "" || l.CallsDay > 0 }

// Budgeted reports whether l caps spending.
func (l Limits) Budgeted() bool { return l.BudgetUSDDay > 0 || l.BudgetUSDMonth > 0 }

// ParseRate splits a rate ("2/minute") into its count and window.
func ParseRate(rate string) (n int, window time.Duration, err error) {
	count, unit, ok := strings.Cut(rate, "/")
	window, known := rateWindows[unit]
	n, nerr := strconv.Atoi(count)
	if !ok || !known || nerr != nil || n < 1 || n > 1_000_000 {
		return 0, 0, fmt.Errorf(`rate must be "N/second", "N/minute" or "N/hour" with N from 1 to 1000000; got %q`, rate)
	}
	return n, window, nil
}

// Interval is the time one call's slot takes to refill (window/N), and the
// bucket's size (Burst, or N when Burst is 0). ok is false without a rate.
func (l Limits) Interval() (interval time.Duration, burst int, ok bool) {
	n, window, err := ParseRate(l.Rate)
	if err != nil {
		return 0, 0, false
	}
	burst = l.Burst
	if burst == 0 {
		burst = n
	}
	return window / time.Duration(n), burst, true
}

// Validate checks limits as a mint request gives them; its error says which
// field is wrong and what it takes.
func (l Limits) Validate() error {
	if l.Rate != "" {
		if _, _, err := ParseRate(l.Rate); err != nil {
			return err
		}
	}
	switch {
	case l.Burst < 0 || l.Burst > 1_000_000:
		return fmt.Errorf("burst must be a number of calls from 1 to 1000000; got %d", l.Burst)
	case l.Burst > 0 && l.Rate == "":
		return fmt.Errorf(`burst needs a rate, e.g. "rate":"2/minute","burst":5`)
	case l.CallsDay < 0:
		return fmt.Errorf("calls_day must be a positive number of calls; got %d", l.CallsDay)
	}
	for name, v := range map[string]float64{"budget_usd_day": l.BudgetUSDDay, "budget_usd_month": l.BudgetUSDMonth} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s must be a positive amount of US dollars; got %v", name, v)
		}
	}
	return nil
}

// Day is the start of the UTC day that holds at: the window budget_usd_day
// and calls_day count in.
func Day(at time.Time) time.Time {
	y, m, d := at.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Month is the start of the UTC month that holds at.
func Month(at time.Time) time.Time {
	y, m, _ := at.UTC().Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
}
