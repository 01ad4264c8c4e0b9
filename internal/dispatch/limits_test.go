package dispatch

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/ledger"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// gateCall is a top-level call's pass through the limits: its refusal, or
// nil once it is in the shared count (as a call waits before it is answered).
func gateCall(d *Dispatcher, tok *rowcall.Token, now time.Time) *rowcall.Error {
	e, counted := d.limit(context.Background(), tok, now, false)
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

// A read of a token's spend loses no receipt this host counted: two calls of
// a quick row that start within one millisecond spend $0.0075 of a $0.005
// day, and the third is refused, whenever the read the second call began
// (the spend was past half the cap) answers. The receipts' start is kept to
// the millisecond, so the read, which sums receipts that started before the
// millisecond it began in, does not see the first call's; it used to replace
// the spend the host had counted, and the third call passed.
func TestSpendReadLosesNoReceipt(t *testing.T) {
	store := sqlstore.New(testdb.Open(t))
	signer, err := ledger.NewSigner(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	receipts := sqlstore.NewReceiptLog(store, signer)
	t.Cleanup(receipts.Close)
	d := &Dispatcher{Meter: store}
	tok := &rowcall.Token{ID: "tok_spend", Limits: rowcall.Limits{BudgetUSDDay: 0.005}}
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC).Add(100 * time.Microsecond)
	const cost = 0.00375

	// call gates one call started at at and, when it passes, stores its
	// receipt and counts its spend as the dispatcher does.
	call := func(i int, at time.Time) *rowcall.Error {
		e := gateCall(d, tok, at)
		if e != nil {
			return e
		}
		// The read the gate began is answered before or after the call's
		// receipt: both orders must hold.
		if i == 1 {
			settled(t, d.limiters.get(tok))
		}
		rc := rowcall.Receipt{ID: "inv_spend_" + strconv.Itoa(i), Trace: "t_spend", Actor: "token:" + tok.ID, Key: "S_SPEND", Type: rowcall.TypeAgent,
			StartedAt: at.UTC().Format(rowcall.Timestamp), OK: true, Outcome: "ok", CostUSD: cost, TokenID: tok.ID}
		d.spend(&call{payer: tok}, cost, at, true)
		if err := <-receipts.Append(rc); err != nil {
			t.Fatal(err)
		}
		return nil
	}
	for i, at := range []time.Time{start, start.Add(400 * time.Microsecond)} {
		if e := call(i, at); e != nil {
			t.Fatalf("call %d of a $0.005 day at $0.00375 each was refused: %v", i+1, e)
		}
	}
	settled(t, d.limiters.get(tok))
	e := call(2, start.Add(800*time.Microsecond))
	settled(t, d.limiters.get(tok))
	if e == nil || e.Reason() != "budget_exhausted:0.0075>=0.005" {
		t.Fatalf("a third call after $0.0075 of a $0.005 day: %v, want budget_exhausted:0.0075>=0.005", e)
	}
}

// settled waits until no read of m's spend is in flight.
func settled(t *testing.T, m *meter) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		m.spendMu.Lock()
		reading := m.reading
		m.spendMu.Unlock()
		if !reading {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a read of the token's spend did not answer in 10 s")
		}
	}
}
