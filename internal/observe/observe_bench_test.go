package observe

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/sqlstore"
)

// BenchmarkGroup is what observing adds to the receipt writer per receipt
// (it runs on the writer goroutine, before the group's callers are answered):
// the metrics alone, and the metrics with a span queued for an OTLP exporter
// on loopback.
func BenchmarkGroup(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	b.Cleanup(sink.Close)
	m := NewMetrics(Sources{})
	tr, err := NewTracing(context.Background(), func(k string) string {
		if k == EnvRowcall {
			return sink.URL + "/v1/traces"
		}
		return ""
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.Close(context.Background()) })
	start := time.Now().UTC().Format(rowcall.Timestamp)
	group := func(i int) sqlstore.Group {
		return sqlstore.Group{Receipts: []rowcall.Receipt{{ID: fmt.Sprint("inv_", i), Trace: "t_bench", Parent: "inv_parent", Key: "BENCH",
			Type: rowcall.TypeHTTP, Runner: "http", StartedAt: start, Millis: 1.5, OK: true, Outcome: "ok"}}, Errs: []error{nil}, Took: time.Millisecond}
	}
	b.Run("metrics", func(b *testing.B) {
		g := group(0)
		for b.Loop() {
			m.Group(g)
		}
	})
	b.Run("metrics+span", func(b *testing.B) {
		f := Each(m.Group, tr.Observer())
		i := 0
		for b.Loop() {
			i++
			f(group(i))
		}
	})
}
