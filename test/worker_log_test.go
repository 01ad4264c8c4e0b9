package test

// The worker's log reaches wrangler's output at the level the tests run it
// with (`wrangler dev --log-level info`, which drops console.log, where Go's
// stdout and stderr used to go): an internal error's line, a panic's trace,
// the start-up lines (worker/log.go, build/shim/worker.mjs).
//
//	go test ./test -run TestWorkerLog -v

import (
	"strings"
	"testing"
	"time"
)

func TestWorkerLog(t *testing.T) {
	tg := startWorker(t, []string{"ROWCALL_WORKER_DEBUG=1"})
	h := tg.host

	// said waits for wrangler to print a line holding every one of parts
	// (it prints the worker's console lines after the answer).
	said := func(t *testing.T, parts ...string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			for _, line := range strings.Split(tg.Output(), "\n") {
				found := true
				for _, p := range parts {
					found = found && strings.Contains(line, p)
				}
				if found {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("wrangler dev's output has no line with %q; it is:\n%s", parts, tg.Output())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	t.Run("start-up", func(t *testing.T) {
		said(t, "rowcall: Go instance 1 started in", "instantiate")
		said(t, "rowcall: first request", "handler_built=", "answered=")
	})

	t.Run("internal error", func(t *testing.T) {
		// A database that lost a table: the API answers internal, without the
		// cause, which the log has.
		if _, err := tg.DB(t).Exec(`DROP TABLE tokens`); err != nil {
			t.Fatal(err)
		}
		got := h.do(t, req{Method: "GET", Path: "/api/tokens"})
		expect(t, got, 500, map[string]any{"error": "internal", "message": "the server failed; the log has the cause"})
		said(t, "level=ERROR", `msg="internal error"`, "path=/api/tokens", "no such table: tokens")
	})

	t.Run("panic", func(t *testing.T) {
		expect(t, h.do(t, req{Method: "POST", Path: "/_worker/crash"}), 503, map[string]any{"error": "internal"})
		said(t, "panic: rowcall: POST /_worker/crash")
	})
}
