package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// Two hosts (dispatchers) on one database take leases of the shared count:
// calls made in turn on both, on a frozen clock, pass exactly the bucket's
// burst and exactly calls_day, and then both refuse with the usual literal
// reasons — a lease is spent, never counted twice.
func TestLeasesShareOneCount(t *testing.T) {
	store := sqlstore.New(testdb.Open(t))
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		limits rowcall.Limits
		lease  int
		want   int
		reason string
	}{
		{rowcall.Limits{Rate: "1000/second"}, 100, 1000, "rate_limited:1000/second"},
		{rowcall.Limits{CallsDay: 5000}, 5, 5000, "budget_exhausted:5000>=5000"},
		{rowcall.Limits{Rate: "5/hour"}, 1, 5, "rate_limited:5/hour"},
	} {
		if got := leaseSlots(c.limits); got != c.lease {
			t.Fatalf("leaseSlots(%+v) = %d, want %d", c.limits, got, c.lease)
		}
		hosts := []*Dispatcher{{Meter: store}, {Meter: store}}
		tok := &rowcall.Token{ID: "tok_lease_" + c.reason, Limits: c.limits}
		passed := 0
		var last *rowcall.Error
		for i := range 2*c.want + 10 {
			if e := hosts[i%2].limit(ctx, tok, now); e == nil {
				passed++
			} else {
				last = e
			}
		}
		if passed != c.want || last == nil || last.Reason() != c.reason {
			t.Fatalf("%+v: %d calls passed (want %d), last refusal %v", c.limits, passed, c.want, last)
		}
	}
}

// A lease held through a refill is the stated overshoot: a host holds at
// most lease−1 calls it took earlier, so a burst after the bucket refilled
// passes burst + lease−1 on two hosts, and no more.
func TestLeaseOvershootBound(t *testing.T) {
	store := sqlstore.New(testdb.Open(t))
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tok := &rowcall.Token{ID: "tok_overshoot", Limits: rowcall.Limits{Rate: "1000/second"}}
	a, b := &Dispatcher{Meter: store}, &Dispatcher{Meter: store}
	if e := a.limit(ctx, tok, now); e != nil { // a takes a lease of 100 and spends one
		t.Fatal(e)
	}
	now = now.Add(time.Second) // the shared bucket is full again
	passed := 0
	for i := range 3000 {
		if [](*Dispatcher){a, b}[i%2].limit(ctx, tok, now) == nil {
			passed++
		}
	}
	if want := 1000 + leaseSlots(tok.Limits) - 1; passed != want {
		t.Fatalf("%d calls passed after a refill, want burst + lease−1 = %d", passed, want)
	}
}
