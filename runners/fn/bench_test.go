package fn_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/wasm/examples"
	"github.com/tetratelabs/wazero"
)

// The benchmarks behind the figures in the report: go test -bench . ./runners/fn/
// (add -benchtime=2s for steadier numbers). "compiler" is wazero's compiler
// (the local host on amd64/arm64), "interpreter" what the worker runs.

var benchModules = []struct{ name, lang, content, body string }{
	{"echo", "wat", `["$1+"]`, "hello"},
	{"now", "c", "", ""},
	{"upper", "assemblyscript", `["$1+"]`, "hello"},
	{"last_reply_of", "go", `["$1+"]`, "thinking [REPLY]hello[/REPLY]"},
}

var engines = []struct {
	name   string
	interp bool
}{{"compiler", false}, {"interpreter", true}}

func benchWasm(b *testing.B, name string) []byte {
	e, _ := examples.ByName(name)
	if e.Wasm != nil {
		return e.Wasm
	}
	return goExample(b, name)
}

// BenchmarkCompile: compiling each module from scratch. Every iteration
// appends a different custom section so wazero's own cache never hits.
func BenchmarkCompile(b *testing.B) {
	for _, m := range benchModules {
		wasm := benchWasm(b, m.name)
		for _, e := range engines {
			b.Run(fmt.Sprintf("%s-%s/%s", m.name, m.lang, e.name), func(b *testing.B) {
				cfg := wazero.NewRuntimeConfig()
				if e.interp {
					cfg = wazero.NewRuntimeConfigInterpreter()
				}
				rt := wazero.NewRuntimeWithConfig(ctx, cfg)
				defer rt.Close(ctx)
				b.ReportMetric(float64(len(wasm)), "wasm-bytes")
				i := 0
				for b.Loop() {
					i++
					cm, err := rt.CompileModule(ctx, withCustomSection(wasm, i))
					if err != nil {
						b.Fatal(err)
					}
					cm.Close(ctx)
				}
			})
		}
	}
}

// withCustomSection returns wasm with a custom section "n" holding i appended.
func withCustomSection(wasm []byte, i int) []byte {
	payload := []byte{1, 'n', byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)}
	return append(append(slices.Clip(wasm), 0, byte(len(payload))), payload...)
}

// BenchmarkCall: one call through the runner (registry lookup in SQLite, a
// fresh instance, the run, the result) with the module already compiled.
// Reports p50 and p99 besides the mean.
func BenchmarkCall(b *testing.B) {
	for _, m := range benchModules {
		for _, e := range engines {
			b.Run(fmt.Sprintf("%s-%s/%s", m.name, m.lang, e.name), func(b *testing.B) {
				r := benchRunner(b, m.name, e.interp)
				if out := call(r, m.name, m.content, m.body); out.Failed() {
					b.Fatal(out.Result)
				}
				lat := make([]time.Duration, 0, 1024)
				for b.Loop() {
					start := time.Now()
					if out := call(r, m.name, m.content, m.body); out.Failed() {
						b.Fatal(out.Result)
					}
					lat = append(lat, time.Since(start))
				}
				reportPercentiles(b, lat)
			})
		}
	}
}

// BenchmarkCallParallel: calls per second with every core calling (GOMAXPROCS
// goroutines; -cpu 2 for "2 cores").
func BenchmarkCallParallel(b *testing.B) {
	for _, m := range benchModules {
		b.Run(m.name+"-"+m.lang, func(b *testing.B) {
			r := benchRunner(b, m.name, false)
			call(r, m.name, m.content, m.body)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if out := call(r, m.name, m.content, m.body); out.Failed() {
						b.Error(out.Result)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

func benchRunner(b *testing.B, name string, interp bool) *fn.Runner {
	reg := openRegistry(b)
	r, err := fn.New(ctx, reg, fn.Config{Interpreter: interp, Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close(ctx) })
	if _, err := reg.Put(ctx, name, benchWasm(b, name)); err != nil {
		b.Fatal(err)
	}
	return r
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkCallUnderAttack: BenchmarkCall's echo while a CPU loop, a memory
// bomb (64 MiB, then a trap) and a table bomb (table.grow by 100,000,000) run
// without pause beside it, under the default limits. Compare its p50 and p99
// with BenchmarkCall/echo-wat/compiler in the same run; host-MiB is the
// memory the test process took from the OS, the attack's cost to the host.
func BenchmarkCallUnderAttack(b *testing.B) {
	r, reg := newRunner(b, fn.Config{})
	put(b, reg, "tablegrow")
	stop := make(chan struct{})
	wg := hostileLoad(r, stop)
	defer wg.Wait()
	defer close(stop)
	time.Sleep(100 * time.Millisecond)
	lat := make([]time.Duration, 0, 1024)
	for b.Loop() {
		start := time.Now()
		if out := call(r, "echo", whole, "hello"); out.Failed() {
			b.Fatal(out.Result)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys>>20), "host-MiB") // the most the process took from the OS
}
