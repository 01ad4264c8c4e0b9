package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/outbound"
	"github.com/rowcall/rowcall/internal/testdb"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/runners/fn"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/sqlstore"
	"github.com/rowcall/rowcall/sqlstore/sqlite"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// BenchmarkHostDispatch is bench/load.sh's request without the network: the
// host's API wired as the local host wires it (the compiled fn runner, group
// commits in one statement, the event-log check good for 1 ms and fn calls
// speculating past it — /look without that —, WAL checkpoints in the
// background every 100 ms) over a fresh SQLite file,
// driven by 50 callers at once with POST /api/dispatch
// {"key":"ECHO","body":"hello"}, each answer written once its receipt is
// stored. It reports the process's CPU per request (user and system) and each
// request's time in the handler (p50-ms … p999-ms) beside ns/op, B/op and
// allocs/op — the handler's part of a request's CPU under load, net/http's
// reads and writes left out — and the receipt writer's side: receipts a group
// and each receipt's wait from queued to stored (wait-p50-ms, wait-p99-ms).
//
//	go test ./internal/app -run xxx -bench HostDispatch -benchtime 20000x -count 3 -benchmem
func BenchmarkHostDispatch(b *testing.B) {
	b.Run("speculate", func(b *testing.B) { benchHostDispatch(b, true) }) // as the host runs it
	b.Run("look", func(b *testing.B) { benchHostDispatch(b, false) })     // each call looks at the event log once Fresh has passed
}

// echoModule is an fn runner over db's module registry, which holds the
// example module echo.
func echoModule(b *testing.B, db *sql.DB) (*fn.Runner, *modules.Registry) {
	b.Helper()
	ctx := context.Background()
	reg := modules.NewRegistry(db, modules.NewSQLBlobs(db))
	runner, err := fn.New(ctx, reg, fn.Config{CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { runner.Close(ctx) })
	echo, _ := wasmexamples.ByName("echo")
	if _, err := reg.Put(ctx, "echo", echo.Wasm); err != nil {
		b.Fatal(err)
	}
	return runner, reg
}

func benchHostDispatch(b *testing.B, speculate bool) {
	ctx := context.Background()
	db := testdb.Open(b)
	cctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { sqlite.Checkpointer(cctx, db, 100*time.Millisecond); close(done) }()
	b.Cleanup(func() { stop(); <-done })
	runner, reg := echoModule(b, db)
	signer, _ := testenv.Signer(b)
	settings := app.ReadSettings(func(string) string { return "" })
	settings.NoExamples = true
	a, err := app.New(settings, app.Platform{DB: db, MaxParams: sqlite.MaxParams, Signer: signer, Fresh: time.Millisecond, Speculate: speculate,
		OwnerKeys: func() []string { return []string{"owner"} }, Fn: runner, Modules: reg, ListenURL: "http://127.0.0.1:8080",
		Client: func(p outbound.Policy, t time.Duration) *http.Client { return p.Client(t) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Close)
	do := func(path, body string, want int) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", path, strings.NewReader(body))
		r.Header.Set("x-terminal-key", "owner")
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		a.Handler.ServeHTTP(w, r)
		if w.Code != want {
			b.Fatalf("POST %s: %d %s", path, w.Code, w.Body)
		}
		return w
	}
	do("/api/directory", `{"key":"ECHO","type":"fn","target":"echo","content":"# WHAT: echo\n[\"$1+\"]"}`, 201)
	if w := do("/api/dispatch", `{"key":"ECHO","body":"hello"}`, 200); !bytes.Contains(w.Body.Bytes(), []byte(`"result":"hello"`)) {
		b.Fatal(w.Body)
	}
	var wmu sync.Mutex
	var waits []time.Duration
	groups := 0
	a.Receipts.Observe(func(g sqlstore.Group) { wmu.Lock(); waits = append(waits, g.Waited...); groups++; wmu.Unlock() })
	b.SetParallelism(max(1, 50/runtime.GOMAXPROCS(0))) // 50 callers in all
	b.ReportAllocs()
	b.ResetTimer()
	var mu sync.Mutex
	var took []time.Duration
	start := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		defer func() { mu.Lock(); took = append(took, mine...); mu.Unlock() }()
		for pb.Next() {
			t := time.Now()
			if w := do("/api/dispatch", `{"key":"ECHO","body":"hello"}`, 200); !bytes.Contains(w.Body.Bytes(), []byte(`"ok":true`)) {
				b.Error(w.Body)
				return
			}
			mine = append(mine, time.Since(t))
		}
	})
	b.ReportMetric(us(cpuTime()-start)/float64(b.N), "cpu-µs/op")
	slices.Sort(took)
	for _, q := range []struct {
		p    float64
		unit string
	}{{.5, "p50-ms"}, {.9, "p90-ms"}, {.99, "p99-ms"}, {.999, "p999-ms"}} {
		b.ReportMetric(float64(took[int(q.p*float64(len(took)-1))].Microseconds())/1000, q.unit)
	}
	a.Receipts.Observe(nil)
	wmu.Lock()
	defer wmu.Unlock()
	slices.Sort(waits)
	b.ReportMetric(float64(len(waits))/float64(groups), "receipts/group")
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1000, "wait-p50-ms")
	b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds())/1000, "wait-p99-ms")
}
