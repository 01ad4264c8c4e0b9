package dispatch

import (
	"context"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// gateCall is a top-level call's pass through the limits: its refusal, or
// nil once it is in the shared count (as a call waits before it is answered).
func gateCall(d *Dispatcher, tok *rowcall.Token, now time.Time) *rowcall.Error {
	e, counted := d.limit(context.Background(), tok, now)
	if counted != nil {
		<-counted
	}
	return e
}

// Two hosts (dispatchers) on one database take leases of the shared count:
// calls made in turn on both, on a frozen clock, pass exactly the bucket's
// burst and exactly calls_day, and then both refuse with the usual literal
// reasons — a lease is spent, never counted twice. 5000/second refills a slot
// every 200 µs: the shared count holds it to the microsecond (in
// milliseconds it was 0, no rate, and 10,000 calls passed).
func TestLeasesShareOneCount(t *testing.T) {
	store := sqlstore.New(testdb.Open(t))
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		limits rowcall.Limits
		lease  int
		want   int
		reason string
	}{
		{rowcall.Limits{Rate: "1000/second"}, 100, 1000, "rate_limited:1000/second"},
		{rowcall.Limits{Rate: "5000/second"}, 500, 5000, "rate_limited:5000/second"},
		{rowcall.Limits{CallsDay: 5000}, 5, 5000, "budget_exhausted:5000>=5000"},
		{rowcall.Limits{CallsDay: 5}, 1, 5, "budget_exhausted:5>=5"},
	} {
		if got := leaseSlots(c.limits); got != c.lease || countsAfter(c.limits) {
			t.Fatalf("leaseSlots(%+v) = %d, want %d (and not counted after)", c.limits, got, c.lease)
		}
		hosts := []*Dispatcher{{Meter: store}, {Meter: store}}
		tok := &rowcall.Token{ID: "tok_lease_" + c.reason, Limits: c.limits}
		passed := 0
		var last *rowcall.Error
		for i := range 2*c.want + 10 {
			if e := gateCall(hosts[i%2], tok, now); e == nil {
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
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tok := &rowcall.Token{ID: "tok_overshoot", Limits: rowcall.Limits{Rate: "1000/second"}}
	a, b := &Dispatcher{Meter: store}, &Dispatcher{Meter: store}
	if e := gateCall(a, tok, now); e != nil { // a takes a lease of 100 and spends one
		t.Fatal(e)
	}
	now = now.Add(time.Second) // the shared bucket is full again
	passed := 0
	for i := range 3000 {
		if gateCall([]*Dispatcher{a, b}[i%2], tok, now) == nil {
			passed++
		}
	}
	if want := 1000 + leaseSlots(tok.Limits) - 1; passed != want {
		t.Fatalf("%d calls passed after a refill, want burst + lease−1 = %d", passed, want)
	}
}

// A small rate's calls pass on the in-process bucket and are counted in the
// shared count after (countsAfter). On one host the rate holds exactly; on
// two hosts whose calls alternate, each acts on the count as of its own last
// call, so the other's last call is unseen once: burst + 1 pass, then both
// refuse; and a third host that starts late refuses at once (its first call
// takes its slot in the statement).
func TestCountedAfterOvershootBound(t *testing.T) {
	store := sqlstore.New(testdb.Open(t))
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

	one := &rowcall.Token{ID: "tok_after_one", Limits: rowcall.Limits{Rate: "10/second", Burst: 1}}
	if !countsAfter(one.Limits) || countsAfter(rowcall.Limits{Rate: "10/second", CallsDay: 100}) {
		t.Fatal("countsAfter: a small rate is counted after, a small calls_day is not")
	}
	d, passed := &Dispatcher{Meter: store}, 0
	for range 100 { // one call every 50 ms on a bucket that refills every 100 ms
		now = now.Add(50 * time.Millisecond)
		if gateCall(d, one, now) == nil {
			passed++
		}
	}
	if passed != 50 {
		t.Fatalf("10/second, burst 1, one host, calls every 50 ms for 5 s: %d passed, want 50", passed)
	}

	tok := &rowcall.Token{ID: "tok_after", Limits: rowcall.Limits{Rate: "5/hour"}}
	a, b := &Dispatcher{Meter: store}, &Dispatcher{Meter: store}
	passed = 0
	var last *rowcall.Error
	for i := range 20 {
		if e := gateCall([]*Dispatcher{a, b}[i%2], tok, now); e == nil {
			passed++
		} else {
			last = e
		}
	}
	if passed != 5+1 || last == nil || last.Reason() != "rate_limited:5/hour" {
		t.Fatalf("5/hour over two hosts in turn: %d passed (want burst + 1 = 6), last refusal %v", passed, last)
	}
	if e := gateCall(&Dispatcher{Meter: store}, tok, now); e == nil || e.Reason() != "rate_limited:5/hour" {
		t.Fatalf("a host that starts after the bucket is spent let a call through: %v", e)
	}
}
