package dispatch

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/sqlstore"
)

// BenchmarkLimitGate is what a token's limits add to the gate per call, on
// the embedded host's SQLite file: nothing for a token without limits; the
// in-process bucket alone for a call it refuses; the in-process bucket and a
// lease of the shared count (one UPSERT every leaseSlots calls) for a call it
// lets through; a small rate (10/second, burst 1, a call every 100 ms, each
// let through): the in-process bucket, the call counted in the shared count
// while it runs (countsAfter); a budget's spend read from the receipts once a
// second, and after every call once half the cap is spent (while the calls go
// on). It reports the p50 and p99 of single calls, the share of the calls
// that were let through (admitted-%), and where a call is counted after, the
// p50 until its count is in the shared count (counted-p50-ns: what a call
// whose runner took no time would wait before its answer; the loop waits for
// it untimed before the next call).
func BenchmarkLimitGate(b *testing.B) {
	store := sqlstore.New(testdb.Open(b))
	ctx := context.Background()
	cases := []struct {
		name   string
		limits rowcall.Limits
		refuse bool
		step   time.Duration // the clock's step per call
		spent  float64       // the token's receipts' cost_usd today
	}{
		{"none", rowcall.Limits{}, false, time.Microsecond, 0},
		{"rate-refused-in-process", rowcall.Limits{Rate: "1/hour"}, true, time.Microsecond, 0},
		// A 1000000/second bucket refills as fast as the clock's 1 µs steps drain it.
		{"rate-taken", rowcall.Limits{Rate: "1000000/second"}, false, time.Microsecond, 0},
		{"calls-day-taken", rowcall.Limits{CallsDay: 1 << 40}, false, time.Microsecond, 0},
		{"rate-taken-lease-1", rowcall.Limits{Rate: "10/second", Burst: 1}, false, 100 * time.Millisecond, 0},
		{"budget-day", rowcall.Limits{BudgetUSDDay: 1e9}, false, time.Microsecond, 0},
		{"budget-day-past-half", rowcall.Limits{BudgetUSDDay: 1e9}, false, time.Microsecond, 6e8},
	}
	runs := 0 // each run has its own token: the shared count outlives a run
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			runs++
			d := &Dispatcher{Meter: store}
			tok := &rowcall.Token{ID: "tok_bench_" + c.name + strconv.Itoa(runs), Limits: c.limits}
			now := time.Now()
			if c.spent > 0 {
				if _, err := store.DB.Exec(`INSERT INTO receipts (id, trace, actor, key, type, runner, started_at, duration_ms, ok, material,
					cost_usd, outcome, input_sha256, output_sha256, contract_sha256, token_id) VALUES (?, 't', 'owner', 'K', 'agent', 'agent', ?, 1, 1, 0, ?, 'ok', '', '', '', ?)`,
					"inv_bench_"+tok.ID, now.UTC().Format(rowcall.Timestamp), c.spent, tok.ID); err != nil {
					b.Fatal(err)
				}
			}
			if c.refuse {
				d.limit(ctx, tok, now, false) // takes the one slot
			}
			var took, counted []time.Duration
			admitted := 0
			for b.Loop() {
				now = now.Add(c.step)
				start := time.Now()
				e, done := d.limit(ctx, tok, now, false)
				took = append(took, time.Since(start))
				if (e != nil) != c.refuse {
					b.Fatal(e)
				}
				if e == nil {
					admitted++
				}
				if done != nil {
					<-done
					counted = append(counted, time.Since(start))
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(admitted*100/len(took)), "admitted-%")
			if len(counted) > 0 {
				slices.Sort(counted)
				b.ReportMetric(float64(counted[len(counted)/2].Nanoseconds()), "counted-p50-ns")
			}
		})
	}
}
