package test

// TestBenchmarkHosts measures what docs/benchmarks.md reports for the three
// hosts and a plain JavaScript worker on the same D1 database in the same
// workerd: the worker's .wasm size, its cold start in `wrangler dev`, and
// p50/p99 latency of a row read (GET /api/directory/{key}) and of a dispatch
// of an http row to a loopback upstream, measured one request at a time.
// It is a measurement, not a check, so it runs only when asked:
//
//	ROWCALL_BENCH=1 go test ./test -run TestBenchmarkHosts -v -count=1 -timeout 30m
//
// ROWCALL_BENCH_N sets the requests per figure (default 300, after 20 warm-up
// requests).
//
// The edge figures are taken side by side: the Go worker and the JavaScript
// worker (build/bench/jsworker.mjs) run at the same time on the same local D1
// database, and their requests alternate (Go read, JS read, Go dispatch, JS
// dispatch, Go fn call, …), so both see the same machine at the same moment
// and their ratio holds on a noisy, shared machine. The JavaScript worker's
// dispatch does the same D1 work, outbound call and signature as the Go
// worker's warm dispatch (see jsworker.mjs).

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// latencies sends n requests (after warm-up ones) one at a time and returns
// their durations, failing on any status but want.
func latencies(t *testing.T, warm, n int, want int, send func() (*http.Response, error)) []time.Duration {
	t.Helper()
	out := interleaved(t, warm, n, probe{want, send})
	return out[0]
}

// probe is one kind of request a benchmark sends.
type probe struct {
	want int
	send func() (*http.Response, error)
}

// interleaved sends warm+n rounds of one request of each probe, in order,
// one at a time, and returns each probe's n measured durations, sorted.
func interleaved(t *testing.T, warm, n int, probes ...probe) [][]time.Duration {
	t.Helper()
	deadline := time.Now().Add(15 * time.Minute)
	out := make([][]time.Duration, len(probes))
	for i := range warm + n {
		for j, p := range probes {
			start := time.Now()
			res, err := p.send()
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			d := time.Since(start)
			if res.StatusCode != p.want {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			if i >= warm {
				out[j] = append(out[j], d)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %d rounds", i+1)
		}
	}
	for _, d := range out {
		slices.Sort(d)
	}
	return out
}

func pct(d []time.Duration, p float64) time.Duration {
	i := int(float64(len(d))*p+0.5) - 1
	return d[max(0, min(i, len(d)-1))]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64)
}

// ownerGet and ownerPost build the benchmark's requests.
func ownerGet(url, key string) func() (*http.Response, error) {
	return func() (*http.Response, error) {
		r, _ := http.NewRequest("GET", url, nil)
		r.Header.Set("x-terminal-key", key)
		return benchClient.Do(r)
	}
}

func ownerPost(url, key, body string) func() (*http.Response, error) {
	return func() (*http.Response, error) {
		r, _ := http.NewRequest("POST", url, strings.NewReader(body))
		r.Header.Set("x-terminal-key", key)
		r.Header.Set("Content-Type", "application/json")
		return benchClient.Do(r)
	}
}

func TestBenchmarkHosts(t *testing.T) {
	if os.Getenv("ROWCALL_BENCH") != "1" {
		t.Skip("a measurement, not a check: run with ROWCALL_BENCH=1 (see docs/benchmarks.md)")
	}
	n := 300
	if v, err := strconv.Atoi(os.Getenv("ROWCALL_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	const warm = 20
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"ok":true}`) })

	type figures struct {
		host           string
		read, dispatch []time.Duration
	}
	var rows []figures
	var extra []string
	var edge string
	for _, b := range backends {
		tg := b.Start(t, nil)
		row := map[string]any{"key": "BENCH_ROW", "type": "http", "target": "GET " + up.URL + "/bench?q=$1",
			"content": "# WHAT: benchmark row", "category": "bench"}
		if tg.Name == "worker" {
			// The first request after `wrangler dev` is ready compiles the module: the cold start a caller sees.
			start := time.Now()
			expect(t, tg.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), 201, nil)
			extra = append(extra, fmt.Sprintf("worker cold start: %s; the next request (a POST, the first to touch D1) took %s ms",
				tg.Cold, ms(time.Since(start))))
			edge = benchEdge(t, tg, warm, n, &extra)
			continue
		}
		expect(t, tg.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), 201, nil)
		t0 := time.Now()
		f := figures{host: tg.Name, read: latencies(t, warm, n, 200, ownerGet(tg.URL+"/api/directory/BENCH_ROW", tg.Key))}
		t.Logf("%s: %d reads in %s", tg.Name, warm+n, time.Since(t0).Round(time.Millisecond))
		t0 = time.Now()
		f.dispatch = latencies(t, warm, n, 200, ownerPost(tg.URL+"/api/dispatch", tg.Key, `{"key":"BENCH_ROW","body":"x"}`))
		t.Logf("%s: %d dispatches in %s", tg.Name, warm+n, time.Since(t0).Round(time.Millisecond))
		rows = append(rows, f)
	}
	if out, err := buildWorker(); err == nil {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "app.wasm:") {
				extra = append(extra, "worker "+l)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests per figure, one at a time, after %d warm-up requests; milliseconds, measured by the client\n\n", n, warm)
	b.WriteString("| host | read p50 | read p99 | dispatch p50 | dispatch p99 |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, f := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", f.host, ms(pct(f.read, .5)), ms(pct(f.read, .99)), ms(pct(f.dispatch, .5)), ms(pct(f.dispatch, .99)))
	}
	b.WriteString("\n" + edge)
	for _, e := range extra {
		b.WriteString("\n" + e + "\n")
	}
	t.Log("\n" + b.String())
	if p := os.Getenv("ROWCALL_BENCH_OUT"); p != "" {
		os.WriteFile(filepath.Clean(p), []byte(b.String()), 0o644)
	}
}

// benchEdge measures the Go worker tg beside the plain JavaScript worker, on
// the same D1 database, their requests interleaved, and returns the edge
// table. It also times a warm fn call and checks, through GET /_worker/stats,
// that the calls were served by one Go instance without compiling the module
// again.
func benchEdge(t *testing.T, tg *target, warm, n int, extra *[]string) string {
	t0 := time.Now()
	js := startWranglerDev(t, "build/bench/wrangler.toml", tg.Persist, "ROWCALL_OWNER_KEY:"+tg.Key)
	t.Logf("js worker ready in %s", time.Since(t0).Round(time.Millisecond))
	*extra = append(*extra, fmt.Sprintf("js worker cold start: wrangler dev listening after %s; first answer %s later",
		js.Listening.Round(time.Millisecond), js.FirstAnswer.Round(time.Millisecond)))

	echo, _ := wasmexamples.ByName("echo")
	expect(t, tg.do(t, req{Method: "PUT", Path: "/api/modules/bench_echo", Body: echo.Wasm,
		Header: map[string]string{"Content-Type": "application/wasm"}}), 200, nil)
	expect(t, tg.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "BENCH_FN", "type": "fn",
		"target": "bench_echo", "content": "# WHAT: benchmark fn row\n[\"$1+\"]"}}), 201, nil)
	before := stats(t, tg.host)

	const dispatch = `{"key":"BENCH_ROW","body":"x"}`
	t0 = time.Now()
	d := interleaved(t, warm, n,
		probe{200, ownerGet(tg.URL+"/api/directory/BENCH_ROW", tg.Key)},
		probe{200, ownerGet(js.URL+"/api/directory/BENCH_ROW", tg.Key)},
		probe{200, ownerPost(tg.URL+"/api/dispatch", tg.Key, dispatch)},
		probe{200, ownerPost(js.URL+"/api/dispatch", tg.Key, dispatch)},
		probe{200, ownerPost(tg.URL+"/api/dispatch", tg.Key, `{"key":"BENCH_FN","body":"x"}`)},
	)
	t.Logf("edge: %d rounds of 5 requests in %s", warm+n, time.Since(t0).Round(time.Millisecond))
	goRead, jsRead, goDisp, jsDisp, goFn := d[0], d[1], d[2], d[3], d[4]

	after := stats(t, tg.host)
	digest := sha(string(echo.Wasm))
	if after.Instance != before.Instance || after.ModuleLoads[digest] != 0 {
		t.Errorf("the benchmark's requests were not all served by one warm instance: before %+v, after %+v", before, after)
	}
	*extra = append(*extra, fmt.Sprintf("worker: %d requests served by Go instance %d of the isolate; the fn module was compiled once, "+
		"at registration, and loaded (compiled) %d times by the %d fn calls; Go heap %.1f MB, %d GC cycles",
		after.Requests, after.Instance, after.ModuleLoads[digest], warm+n, float64(after.Go.HeapBytes)/1e6, after.Go.GCCycles))

	var b strings.Builder
	b.WriteString("Edge, side by side (requests interleaved: Go read, JS read, Go dispatch, JS dispatch, Go fn call):\n\n")
	b.WriteString("| worker | read p50 | read p99 | dispatch p50 | dispatch p99 | fn call p50 | fn call p99 |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Fprintf(&b, "| worker (Go, one instance per isolate) | %s | %s | %s | %s | %s | %s |\n",
		ms(pct(goRead, .5)), ms(pct(goRead, .99)), ms(pct(goDisp, .5)), ms(pct(goDisp, .99)), ms(pct(goFn, .5)), ms(pct(goFn, .99)))
	fmt.Fprintf(&b, "| js-worker (baseline) | %s | %s | %s | %s | — | — |\n",
		ms(pct(jsRead, .5)), ms(pct(jsRead, .99)), ms(pct(jsDisp, .5)), ms(pct(jsDisp, .99)))
	ratio := func(a, b []time.Duration) string {
		return strconv.FormatFloat(float64(pct(a, .5))/float64(pct(b, .5)), 'f', 2, 64) + "×"
	}
	fmt.Fprintf(&b, "\np50 ratios: Go read / JS read %s; Go dispatch / JS read %s; Go dispatch / JS dispatch (the same D1 work) %s; "+
		"JS dispatch / JS read %s; Go fn call / JS read %s\n",
		ratio(goRead, jsRead), ratio(goDisp, jsRead), ratio(goDisp, jsDisp), ratio(jsDisp, jsRead), ratio(goFn, jsRead))
	return b.String()
}

var benchClient = &http.Client{Timeout: 60 * time.Second}
