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
)

// latencies sends n requests (after warm-up ones) one at a time and returns
// their durations, failing on any status but want.
func latencies(t *testing.T, warm, n int, want int, send func() (*http.Response, error)) []time.Duration {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	out := make([]time.Duration, 0, n)
	for i := range warm + n {
		start := time.Now()
		res, err := send()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		d := time.Since(start)
		if res.StatusCode != want {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
		if i >= warm {
			out = append(out, d)
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %d requests", i+1)
		}
	}
	slices.Sort(out)
	return out
}

func pct(d []time.Duration, p float64) time.Duration {
	i := int(float64(len(d))*p+0.5) - 1
	return d[max(0, min(i, len(d)-1))]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64)
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
		} else {
			expect(t, tg.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), 201, nil)
		}
		read := func() (*http.Response, error) {
			r, _ := http.NewRequest("GET", tg.URL+"/api/directory/BENCH_ROW", nil)
			r.Header.Set("x-terminal-key", tg.Key)
			return benchClient.Do(r)
		}
		disp := func() (*http.Response, error) {
			r, _ := http.NewRequest("POST", tg.URL+"/api/dispatch", strings.NewReader(`{"key":"BENCH_ROW","body":"x"}`))
			r.Header.Set("x-terminal-key", tg.Key)
			r.Header.Set("Content-Type", "application/json")
			return benchClient.Do(r)
		}
		t0 := time.Now()
		f := figures{host: tg.Name, read: latencies(t, warm, n, 200, read)}
		t.Logf("%s: %d reads in %s", tg.Name, warm+n, time.Since(t0).Round(time.Millisecond))
		t0 = time.Now()
		f.dispatch = latencies(t, warm, n, 200, disp)
		t.Logf("%s: %d dispatches in %s", tg.Name, warm+n, time.Since(t0).Round(time.Millisecond))
		rows = append(rows, f)
		if tg.Name == "worker" {
			// The plain JavaScript worker, on the same local D1 database (same
			// persist directory and database id), in the same workerd.
			t0 = time.Now()
			js := startWranglerDev(t, "build/bench/wrangler.toml", tg.Persist, "ROWCALL_OWNER_KEY:"+tg.Key)
			jsRead := func() (*http.Response, error) {
				r, _ := http.NewRequest("GET", js.URL+"/api/directory/BENCH_ROW", nil)
				r.Header.Set("x-terminal-key", tg.Key)
				return benchClient.Do(r)
			}
			t.Logf("js worker ready in %s", time.Since(t0).Round(time.Millisecond))
			extra = append(extra, fmt.Sprintf("js worker cold start: wrangler dev listening after %s; first answer %s later",
				js.Listening.Round(time.Millisecond), js.FirstAnswer.Round(time.Millisecond)))
			rows = append(rows, figures{host: "js-worker (baseline)", read: latencies(t, warm, n, 200, jsRead)})
		}
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
	var goRead, jsRead time.Duration
	for _, f := range rows {
		d50, d99 := "—", "—"
		if len(f.dispatch) > 0 {
			d50, d99 = ms(pct(f.dispatch, .5)), ms(pct(f.dispatch, .99))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", f.host, ms(pct(f.read, .5)), ms(pct(f.read, .99)), d50, d99)
		switch f.host {
		case "worker":
			goRead = pct(f.read, .5)
		case "js-worker (baseline)":
			jsRead = pct(f.read, .5)
		}
	}
	if jsRead > 0 {
		fmt.Fprintf(&b, "\nGo worker / JS worker, row read p50: %.1f×\n", float64(goRead)/float64(jsRead))
	}
	for _, e := range extra {
		b.WriteString("\n" + e + "\n")
	}
	t.Log("\n" + b.String())
	if p := os.Getenv("ROWCALL_BENCH_OUT"); p != "" {
		os.WriteFile(filepath.Clean(p), []byte(b.String()), 0o644)
	}
}

var benchClient = &http.Client{Timeout: 60 * time.Second}
