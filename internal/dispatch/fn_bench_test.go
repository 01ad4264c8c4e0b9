package dispatch_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/fn/modules"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// withEcho adds the WAT echo module and an ECHO fn row to d.
func withEcho(b testing.TB, d *dispatch.Dispatcher) *fn.Runner {
	ctx := context.Background()
	reg := modules.NewRegistry(sqlStore(d).DB, modules.NewSQLBlobs(sqlStore(d).DB))
	r, err := fn.New(ctx, reg, fn.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close(ctx) })
	echo, _ := wasmexamples.ByName("echo")
	if _, err := reg.Put(ctx, "echo", echo.Wasm); err != nil {
		b.Fatal(err)
	}
	row := rowcall.NewRow("ECHO", rowcall.TypeFn)
	row.Target, row.Content = "echo", echo.Content
	if _, err := sqlStore(d).Create(ctx, row); err != nil {
		b.Fatal(err)
	}
	d.Runners[rowcall.TypeFn], d.Modules = r, r
	d.Fresh = time.Millisecond // as the host runs
	return r
}

// BenchmarkFnModule is the module's own run: the fn runner alone.
func BenchmarkFnModule(b *testing.B) {
	d, _ := newDispatcher(b)
	r := withEcho(b, d)
	row, _ := d.Store.Lookup(context.Background(), "ECHO")
	ctx := context.Background()
	digest, _ := r.Digest(ctx, "echo") // resolved once, as the dispatcher does
	for b.Loop() {
		out := r.Run(ctx, &rowcall.Invocation{Row: &row, Body: "hi", Args: []string{"hi"}, Module: digest})
		if out.Result != "hi" {
			b.Fatal(out.Result)
		}
	}
}

// BenchmarkDispatchFn is a whole in-process dispatch of the same row, up to
// its receipt being queued (an HTTP answer also waits for the group commit).
func BenchmarkDispatchFn(b *testing.B) {
	d, _ := newDispatcher(b)
	withEcho(b, d)
	ctx := context.Background()
	for b.Loop() {
		res, err := d.Dispatch(ctx, dispatch.Request{Key: "ECHO", Body: "hi", Principal: rowcall.Principal{Actor: "bench"}})
		if err != nil || res.Result != "hi" {
			b.Fatal(err, res.Result)
		}
	}
}

// BenchmarkDispatchFnDurable waits for each receipt to be stored.
func BenchmarkDispatchFnDurable(b *testing.B) {
	d, _ := newDispatcher(b)
	withEcho(b, d)
	ctx := context.Background()
	for b.Loop() {
		res, err := d.Dispatch(ctx, dispatch.Request{Key: "ECHO", Body: "hi", Principal: rowcall.Principal{Actor: "bench"}})
		if err == nil {
			err = res.Wait()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDispatchFnParallel is many callers at once, each waiting for its
// receipt: the group commit's case.
func BenchmarkDispatchFnParallel(b *testing.B) {
	d, _ := newDispatcher(b)
	withEcho(b, d)
	ctx := context.Background()
	b.SetParallelism(25)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := d.Dispatch(ctx, dispatch.Request{Key: "ECHO", Body: "hi", Principal: rowcall.Principal{Actor: "bench"}})
			if err == nil {
				err = res.Wait()
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFnOverhead is the in-process figure of docs/benchmarks.md, "fn modules": what a whole dispatch
// adds, at the median, to the module's own run. It alternates the fn runner
// alone (FnModule's call) and a dispatch of the same row (receipt queued, as in
// DispatchFn), timing each call, and reports both medians and their
// difference, measured side by side in one run.
func BenchmarkFnOverhead(b *testing.B) {
	d, _ := newDispatcher(b)
	r := withEcho(b, d)
	ctx := context.Background()
	row, _ := d.Store.Lookup(ctx, "ECHO")
	digest, _ := r.Digest(ctx, "echo")
	var alone, whole []time.Duration
	for b.Loop() {
		t := time.Now()
		if out := r.Run(ctx, &rowcall.Invocation{Row: &row, Body: "hi", Args: []string{"hi"}, Module: digest}); out.Result != "hi" {
			b.Fatal(out.Result)
		}
		alone = append(alone, time.Since(t))
		t = time.Now()
		if res, err := d.Dispatch(ctx, dispatch.Request{Key: "ECHO", Body: "hi", Principal: rowcall.Principal{Actor: "bench"}}); err != nil || res.Result != "hi" {
			b.Fatal(err, res.Result)
		}
		whole = append(whole, time.Since(t))
	}
	m, w := median(alone), median(whole)
	b.ReportMetric(float64(m.Nanoseconds())/1e3, "module-p50-µs")
	b.ReportMetric(float64(w.Nanoseconds())/1e3, "dispatch-p50-µs")
	b.ReportMetric(float64((w-m).Nanoseconds())/1e3, "added-p50-µs")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
