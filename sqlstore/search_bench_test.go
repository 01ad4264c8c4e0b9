package sqlstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/rowgen"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
)

// BenchmarkAsk measures ask (Store.Search) over 10,000 and 100,000 generated
// rows with the target questions, reporting p50 and p99 per query.
func BenchmarkAsk(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(itoa(n), func(b *testing.B) {
			ctx := context.Background()
			store := testenv.Store(b)
			store.MaxParams = sqlite.MaxParams
			rows := rowgen.Noise(n, 11)
			var questions []string
			for _, t := range rowgen.Targets() {
				rows = append(rows, t.Row)
				questions = append(questions, t.Questions...)
			}
			if err := store.Upsert(ctx, rows); err != nil {
				b.Fatal(err)
			}
			var took []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				if _, err := store.Search(ctx, questions[i%len(questions)], rowcall.SearchFilter{Limit: 5}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
		})
	}
}

func itoa(n int) string {
	if n%1000 == 0 {
		return trimZero(n/1000) + "k"
	}
	return "n"
}

func trimZero(k int) string {
	s := ""
	for k > 0 {
		s = string(rune('0'+k%10)) + s
		k /= 10
	}
	return s
}
