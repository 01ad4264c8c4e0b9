package rowcall

import (
	"strings"
	"testing"
	"time"
)

func TestLimitsValidateAndInterval(t *testing.T) {
	for _, c := range []struct {
		l        Limits
		err      string
		interval time.Duration
		burst    int
	}{
		{l: Limits{Rate: "2/minute"}, interval: 30 * time.Second, burst: 2},
		{l: Limits{Rate: "10/second", Burst: 1}, interval: 100 * time.Millisecond, burst: 1},
		{l: Limits{Rate: "1/hour", Burst: 5, CallsDay: 100, BudgetUSDDay: 5, BudgetUSDMonth: 50}, interval: time.Hour, burst: 5},
		{l: Limits{Rate: "2/fortnight"}, err: `rate must be "N/second", "N/minute" or "N/hour"`},
		{l: Limits{Rate: "0/minute"}, err: "with N from 1"},
		{l: Limits{Rate: "2 / minute"}, err: "rate must be"},
		{l: Limits{Burst: 3}, err: "burst needs a rate"},
		{l: Limits{Rate: "1/second", Burst: -1}, err: "burst must be"},
		{l: Limits{CallsDay: -1}, err: "calls_day must be"},
		{l: Limits{BudgetUSDMonth: -0.5}, err: "budget_usd_month must be"},
	} {
		err := c.l.Validate()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%+v: %v, want %q", c.l, err, c.err)
			}
			continue
		}
		iv, burst, ok := c.l.Interval()
		if err != nil || !ok || iv != c.interval || burst != c.burst {
			t.Errorf("%+v: %v, interval %v burst %d", c.l, err, iv, burst)
		}
	}
}

func TestLimitReasons(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		want string
	}{
		{&Error{Code: ERateLimited, Args: []string{"2/minute"}}, "rate_limited:2/minute"},
		{&Error{Code: EBudgetExhausted, Args: []string{"5.02", "5"}}, "budget_exhausted:5.02>=5"},
	} {
		if got := c.e.Reason(); got != c.want {
			t.Errorf("%s, want %s", got, c.want)
		}
	}
	if d, m := Day(time.Date(2026, 12, 31, 23, 59, 0, 0, time.FixedZone("x", -3600))), Month(time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC)); !d.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) || !m.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("day %v month %v", d, m)
	}
}
