package test

// The Cloudflare worker keeps one Go instance per isolate (build/shim/worker.mjs,
// worker/): these tests run it in workerd through `wrangler dev --local` and
// check, through its owner-only GET /_worker/stats, that
//
//   - requests are served by one long-lived instance, which a crash replaces
//     on the next request (POST /_worker/crash, enabled by ROWCALL_WORKER_DEBUG=1);
//   - a warm fn call does not compile its module: the fn runner loads a
//     module's bytes only to compile them (a miss of its compiled-module
//     cache), and the stats count those loads per digest. The test makes the
//     counter move once — the first call on a fresh instance must compile — so
//     a counter that never moves cannot pass it;
//   - concurrent requests in one isolate each get their own answer, with the
//     credential of their own env, and all go through the same instance.
//
//	go test ./test -run TestWorkerInstance -v

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// workerStats is GET /_worker/stats.
type workerStats struct {
	Instance    int            `json:"instance"`
	Requests    int            `json:"requests"`
	ModuleLoads map[string]int `json:"fn_module_loads"`
	FnRunner    bool           `json:"fn_runner"`
	Settings    int            `json:"settings_reads"`
	Go          struct {
		HeapBytes int64 `json:"heap_bytes"`
		GCCycles  int64 `json:"gc_cycles"`
	} `json:"go"`
	D1 struct {
		Recent []d1Line `json:"recent"` // the last requests' D1 accounts, oldest first
	} `json:"d1"`
}

func stats(t *testing.T, h *host) workerStats {
	t.Helper()
	got := h.do(t, req{Method: "GET", Path: "/_worker/stats"})
	expect(t, got, 200, nil)
	var s workerStats
	if err := json.Unmarshal(got.Raw, &s); err != nil {
		t.Fatalf("stats %s: %v", got.Raw, err)
	}
	return s
}

func TestWorkerInstance(t *testing.T) {
	up := suiteUpstream(t)
	tg := startWorker(t, []string{"SUITE_API_KEY=" + suiteSecret, "ROWCALL_WORKER_DEBUG=1"})
	h := tg.host

	expect(t, h.do(t, req{Method: "GET", Path: "/_worker/stats", NoAuth: true}), 401, map[string]any{"error": "unauthorized"})
	first := stats(t, h)
	if first.Instance < 1 || first.FnRunner {
		t.Fatalf("stats before any fn call: %+v", first)
	}

	t.Run("one instance, fn modules stay compiled", func(t *testing.T) {
		echo, _ := wasmexamples.ByName("echo")
		digest := sha(string(echo.Wasm))
		wasm := map[string]string{"Content-Type": "application/wasm"}
		expect(t, h.do(t, req{Method: "PUT", Path: "/api/modules/w_echo", Body: echo.Wasm, Header: wasm}), 200, map[string]any{"digest": digest})
		createRow(t, h, map[string]any{"key": "W_ECHO", "type": "fn", "target": "w_echo", "content": "# WHAT: echo\n[\"$1\",\"$2\"]"})

		// Registration compiled the module into the runner's cache; neither
		// call compiles it again.
		for i := range 2 {
			expect(t, dispatchCall(t, h, "W_ECHO", fmt.Sprintf("call|%d", i)), 200, map[string]any{"ok": true, "result": fmt.Sprintf("call %d", i)})
		}
		s := stats(t, h)
		if s.Instance != first.Instance || !s.FnRunner || s.Requests < first.Requests+5 {
			t.Fatalf("not one long-lived instance: before %+v, after %+v", first, s)
		}
		if s.ModuleLoads[digest] != 0 {
			t.Fatalf("warm calls compiled the module: loads %v", s.ModuleLoads)
		}
		if s.Settings != 1 {
			t.Fatalf("the settings were read %d times (once per env object expected)", s.Settings)
		}

		// A crash ends the instance; the shim starts a fresh one on the next
		// request, whose fn runner starts empty.
		got := h.do(t, req{Method: "POST", Path: "/_worker/crash"})
		expect(t, got, 503, map[string]any{"error": "internal"})
		if !strings.Contains(got.JSON["message"].(string), "Go instance stopped") {
			t.Fatalf("crash answer: %s", got.Raw)
		}
		fresh := stats(t, h)
		if fresh.Instance != first.Instance+1 || fresh.Requests != 1 || fresh.FnRunner || len(fresh.ModuleLoads) != 0 {
			t.Fatalf("after the crash: %+v", fresh)
		}
		// The first call on the fresh instance compiles (one load); the next
		// one, warm, does not.
		for i, want := range []int{1, 1} {
			expect(t, dispatchCall(t, h, "W_ECHO", "again|"+fmt.Sprint(i)), 200, map[string]any{"ok": true, "result": "again " + fmt.Sprint(i)})
			if s := stats(t, h); s.Instance != fresh.Instance || s.ModuleLoads[digest] != want {
				t.Fatalf("after call %d on the fresh instance: %+v (want %d load of %s)", i+1, s, want, digest)
			}
		}
	})

	t.Run("a large module: cold and warm call", func(t *testing.T) {
		// A Go wasip1 guest (about 1.9 MB) takes hundreds of milliseconds to
		// compile under wazero's interpreter: the warm call shows it skipped.
		wasm, err := wasmexamples.BuildGo(t.Context(), "last_reply_of")
		if err != nil {
			t.Skip("SKIPPED: ", err)
		}
		ex, _ := wasmexamples.ByName("last_reply_of")
		digest := sha(string(wasm))
		expect(t, h.do(t, req{Method: "PUT", Path: "/api/modules/last_reply_of", Body: wasm,
			Header: map[string]string{"Content-Type": "application/wasm"}}), 200, nil)
		createRow(t, h, map[string]any{"key": "W_LAST", "type": "fn", "target": "last_reply_of", "content": ex.Content})
		expect(t, h.do(t, req{Method: "POST", Path: "/_worker/crash"}), 503, nil)
		arg := "thinking…[REPLY]first[/REPLY] more [REPLY]the answer[/REPLY]"
		var took []time.Duration
		for range 3 {
			start := time.Now()
			got := dispatchCall(t, h, "W_LAST", arg)
			took = append(took, time.Since(start))
			expect(t, got, 200, map[string]any{"ok": true, "result": "the answer"})
		}
		s := stats(t, h)
		if s.ModuleLoads[digest] != 1 {
			t.Fatalf("three calls on one instance loaded (compiled) the module %d times, want 1: %+v", s.ModuleLoads[digest], s)
		}
		t.Logf("%d-byte Go guest: first call on a fresh instance (compile and run) %s; warm calls %s and %s",
			len(wasm), took[0].Round(time.Millisecond), took[1].Round(time.Millisecond), took[2].Round(time.Millisecond))
	})

	t.Run("concurrent requests do not mix", func(t *testing.T) {
		from := len(tg.Output()) // the crashes above are logged (with "panic") before this
		before := stats(t, h)
		createRow(t, h, map[string]any{"key": "W_PRIVATE", "type": "http", "target": "GET " + up.URL + "/private?q=$1", "auth": "bearer:SUITE_API_KEY"})
		createRow(t, h, map[string]any{"key": "W_ECHO_Q", "type": "http", "target": "GET " + up.URL + "/echo?q=$1"})
		const n = 12
		for i := range n {
			createRow(t, h, map[string]any{"key": fmt.Sprintf("W_ROW_%d", i), "type": "http", "target": "GET https://example.test/" + fmt.Sprint(i),
				"content": fmt.Sprintf("# WHAT: row %d", i)})
		}
		type check struct {
			method, path, body string
			want               func(status int, body map[string]any) error
		}
		var checks []check
		for i := range n {
			checks = append(checks,
				check{"GET", fmt.Sprintf("/api/directory/W_ROW_%d", i), "", func(status int, b map[string]any) error {
					if status != 200 || b["key"] != fmt.Sprintf("W_ROW_%d", i) || b["content"] != fmt.Sprintf("# WHAT: row %d", i) {
						return fmt.Errorf("read W_ROW_%d: %d %v", i, status, b)
					}
					return nil
				}},
				check{"POST", "/api/dispatch", fmt.Sprintf(`{"key":"W_ECHO_Q","body":"v%d"}`, i), func(status int, b map[string]any) error {
					if want := fmt.Sprintf(`HTTP 200:{"path":"/echo","q":"v%d"}`, i); status != 200 || b["result"] != want {
						return fmt.Errorf("dispatch v%d: %d %v", i, status, b)
					}
					return nil
				}},
				check{"POST", "/api/dispatch", fmt.Sprintf(`{"key":"W_PRIVATE","body":"p%d"}`, i), func(status int, b map[string]any) error {
					if r, _ := b["result"].(string); status != 200 || !strings.HasPrefix(r, `HTTP 200:{"ok":true,"you_sent":"Bearer `) {
						return fmt.Errorf("credentialed dispatch p%d: %d %v", i, status, b)
					}
					return nil
				}},
				check{"GET", "/api/directory/W_NOPE_" + fmt.Sprint(i), "", func(status int, b map[string]any) error {
					if status != 404 {
						return fmt.Errorf("missing row %d: %d %v", i, status, b)
					}
					return nil
				}},
			)
		}
		// Rounds of all of them at once.
		const rounds = 3
		for range rounds {
			var wg sync.WaitGroup
			errs := make(chan error, len(checks))
			start := make(chan struct{})
			for _, c := range checks {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					r, _ := http.NewRequest(c.method, h.URL+c.path, strings.NewReader(c.body))
					r.Header.Set("x-terminal-key", h.Key)
					r.Header.Set("Content-Type", "application/json")
					res, err := benchClient.Do(r)
					if err != nil {
						errs <- err
						return
					}
					raw, _ := io.ReadAll(res.Body)
					res.Body.Close()
					var b map[string]any
					json.Unmarshal(raw, &b)
					if err := c.want(res.StatusCode, b); err != nil {
						errs <- fmt.Errorf("%w (%s)", err, raw)
					}
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		}
		if t.Failed() {
			t.Fatalf("the worker's output:\n%s", tg.Output())
		}
		after := stats(t, h)
		if after.Instance != before.Instance || after.Requests < before.Requests+rounds*len(checks) {
			t.Fatalf("the concurrent requests were not all served by one instance: before %+v, after %+v", before, after)
		}
		// Every receipt is in the chain, in order, none lost.
		got := h.do(t, req{Method: "GET", Path: "/api/receipts"})
		expect(t, got, 200, nil)
		if c := strings.Count(string(got.Raw), `"key":"W_PRIVATE"`); c != rounds*n {
			t.Fatalf("%d receipts of W_PRIVATE in the export, want %d", c, rounds*n)
		}
		// workerd found nothing wrong either: no request taken for hung, no
		// I/O object used from another request's context.
		for _, bad := range []string{"had hung", "Cannot perform I/O", "Uncaught", "panic", "outside any request context"} {
			if strings.Contains(tg.Output()[from:], bad) {
				t.Fatalf("the worker's output has %q:\n%s", bad, tg.Output()[from:])
			}
		}
	})

	// Go on js/wasm cannot interrupt a module, so no deadline can stop one
	// that loops forever: fuel does (package runners/fn/fuel), as ERR:fn:timeout,
	// and the same instance answers the next call.
	t.Run("a module that never returns is stopped", func(t *testing.T) {
		expect(t, putModule(t, h, "w_loop", wasmexamples.Hostile()["loop"]), 200, nil)
		createRow(t, h, map[string]any{"key": "W_LOOP", "type": "fn", "target": "w_loop"})
		before := stats(t, h)
		start := time.Now()
		got := dispatchCall(t, h, "W_LOOP", "")
		// wrangler dev restarts workerd now and then on a loaded machine and
		// answers this for the request in flight (the loop runs 3 s of CPU
		// quiet, 10 s on a busy machine); the restart is the dev server's, so
		// the call is made once more on the new instance.
		if got.Status == 503 && strings.Contains(string(got.Raw), "restarted mid-request") {
			t.Logf("wrangler restarted the worker mid-request after %v; calling again", time.Since(start).Round(time.Millisecond))
			before, start = stats(t, h), time.Now()
			got = dispatchCall(t, h, "W_LOOP", "")
		}
		expect(t, got, 200, map[string]any{"ok": false, "result": "ERR:fn:timeout:10000000 loop iterations"})
		t.Logf("the loop stopped after %v", time.Since(start).Round(time.Millisecond))
		expect(t, dispatchCall(t, h, "W_ECHO", "still|serving"), 200, map[string]any{"ok": true, "result": "still serving"})
		if after := stats(t, h); after.Instance != before.Instance {
			t.Fatalf("the Go instance was replaced: before %+v, after %+v", before, after)
		}
		// A start section that loops is refused at registration, also in time.
		expect(t, putModule(t, h, "w_startloop", wasmexamples.Hostile()["startloop"]), 422, nil)
	})
}
