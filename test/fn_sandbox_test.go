package test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// The fn sandbox breaks docs/security.md bounds, through the HTTP API: memory a call
// leaves behind, a table bomb, a table too large to register, a stack
// overflow, and more calls than the host runs at once.
func TestFnSandboxBreaks(t *testing.T) {
	// The timeout is what the sleepers below hold their slots for; it is long
	// enough that a stack overflow is reached first on a busy machine.
	h := startHost(t, []string{"--fn-timeout", "8s", "--fn-concurrency", "2"})
	hostile := wasmexamples.Hostile()
	echo, _ := wasmexamples.ByName("echo")
	expect(t, putModule(t, h, "echo", echo.Wasm), 200, nil)
	createRow(t, h, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": echo.Content})
	for _, m := range []string{"regrow", "recurse", "tablegrow", "sleep"} {
		expect(t, putModule(t, h, m, hostile[m]), 200, nil)
		createRow(t, h, map[string]any{"key": strings.ToUpper(m), "type": "fn", "target": m})
	}

	// Pages memory.grow adds are zero, though the call before wrote 0xAB there.
	for range 10 {
		expect(t, dispatchCall(t, h, "REGROW", ""), 200, map[string]any{"ok": true, "result": strings.Repeat("0", 64)})
	}
	expect(t, dispatchCall(t, h, "RECURSE", ""), 200, map[string]any{"ok": false, "result": "ERR:fn:trap:stack overflow"})
	expect(t, dispatchCall(t, h, "TABLEGROW", ""), 200, map[string]any{"ok": true, "result": "big:refused small:ok"})

	got := putModule(t, h, "bigtable", hostile["bigtable"])
	expect(t, got, 422, map[string]any{"error": "module_invalid", "state_changed": false})
	if !strings.Contains(string(got.Raw), "module declares 2000000 table entries; the sandbox allows 1048576") {
		t.Fatalf("bigtable: %s", got.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/modules/bigtable"}), 404, nil)

	// Two sleepers hold both slots: a third call waits 1s, then is told the
	// host is busy; once they end, calls run again.
	sleepers := make(chan resp, 2)
	for range 2 {
		go func() { sleepers <- dispatchCall(t, h, "SLEEP", "") }()
	}
	busy := regexp.MustCompile(`^ERR:fn:busy:2 calls running, none finished within 1s$`)
	var res string
	for range 50 { // until the sleepers hold both slots
		if res, _ = dispatchCall(t, h, "ECHO", "hi").JSON["result"].(string); busy.MatchString(res) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !busy.MatchString(res) {
		t.Fatalf("with both slots held: %q; want ERR:fn:busy", res)
	}
	for range 2 {
		expect(t, <-sleepers, 200, map[string]any{"result": "ERR:fn:timeout:8s"})
	}
	expect(t, dispatchCall(t, h, "ECHO", "free again"), 200, map[string]any{"ok": true, "result": "free again"})
}
