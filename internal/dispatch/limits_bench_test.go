package dispatch

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// BenchmarkLimitGate is what a token's limits add to the gate per call, on
// the embedded host's SQLite file: nothing for a token without limits; the
// in-process bucket alone for a call it refuses; the in-process bucket and
// the shared count's one UPSERT for a call it lets through; the budget's sum
// over the token's receipts. It reports the p50 and p99 of single calls.
func BenchmarkLimitGate(b *testing.B) {
	store := sqlstore.New(testdb.Open(b))
	ctx := context.Background()
	cases := []struct {
		name   string
		limits rowcall.Limits
		refuse bool
	}{
		{"none", rowcall.Limits{}, false},
		{"rate-refused-in-process", rowcall.Limits{Rate: "1/hour"}, true},
		{"rate-taken", rowcall.Limits{Rate: "1000000/second"}, false},
		{"calls-day-taken", rowcall.Limits{CallsDay: 1 << 40}, false},
		{"budget-day", rowcall.Limits{BudgetUSDDay: 1e9}, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			d := &Dispatcher{Meter: store}
			tok := &rowcall.Token{ID: "tok_bench_" + c.name, Limits: c.limits}
			now := time.Now()
			if c.refuse {
				d.limit(ctx, tok, now) // takes the one slot
			}
			var took []time.Duration
			for b.Loop() {
				// The clock steps 1 µs a call: a 1000000/second bucket refills as fast as it drains.
				now = now.Add(time.Microsecond)
				start := time.Now()
				e := d.limit(ctx, tok, now)
				took = append(took, time.Since(start))
				if (e != nil) != c.refuse {
					b.Fatal(e)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}
