package test

import (
	"strings"
	"testing"
	"time"

	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// suiteFnModules registers WebAssembly modules over HTTP (the bytes go to the
// host's blob store: a directory or the SQL table on the host, R2 in the
// worker) and calls them from fn rows; a row pinned to a digest stops running
// when the module's code changes.
func suiteFnModules(t *testing.T, tg *target) {
	h := tg.host
	echo, ok := wasmexamples.ByName("echo")
	upper, ok2 := wasmexamples.ByName("upper")
	if !ok || !ok2 || echo.Wasm == nil || upper.Wasm == nil {
		t.Fatal("the committed example modules echo and upper are missing")
	}
	wasm := map[string]string{"Content-Type": "application/wasm"}
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/modules/s_echo", Body: []byte("not wasm at all"), Header: wasm}), 422, nil)
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/modules/s_echo", Body: echo.Wasm, Header: wasm, NoAuth: true}), 401, nil)
	got := h.do(t, req{Method: "PUT", Path: "/api/modules/s_echo", Body: echo.Wasm, Header: wasm})
	expect(t, got, 200, map[string]any{"ok": true, "name": "s_echo", "size": len(echo.Wasm), "version": 1, "digest": sha(string(echo.Wasm))})
	digest := sha(string(echo.Wasm))

	createRow(t, h, map[string]any{"key": "S_ECHO", "type": "fn", "target": "s_echo", "content": "# WHAT: echo\n[\"$1\",\"$2\"]"})
	createRow(t, h, map[string]any{"key": "S_ECHO_PINNED", "type": "fn", "target": "s_echo@sha256:" + digest, "content": "# WHAT: pinned echo\n[\"$1+\"]"})
	got = dispatchCall(t, h, "S_ECHO", "hello|wasm world")
	expect(t, got, 200, map[string]any{"ok": true, "ran": true, "result": "hello wasm world"})
	id := proof(t, got)["invocation_id"].(string)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id, NoAuth: true}), 200, map[string]any{"status": "PROVEN_MATERIAL_RESULT"})
	expect(t, dispatchCall(t, h, "S_ECHO_PINNED", "a|b"), 200, map[string]any{"ok": true, "result": "a|b"})
	contract := proof(t, got)["contract_sha256"]

	// New code under the same name: the unpinned row runs it (its contract
	// fingerprint changes), the pinned row refuses.
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/modules/s_echo", Body: upper.Wasm, Header: wasm}), 200, map[string]any{"version": 2})
	got = dispatchCall(t, h, "S_ECHO", "shout|it")
	expect(t, got, 200, map[string]any{"ok": true, "result": "SHOUT IT"})
	if proof(t, got)["contract_sha256"] == contract {
		t.Fatal("the contract fingerprint did not change with the module's code")
	}
	got = dispatchCall(t, h, "S_ECHO_PINNED", "a")
	if r, _ := got.JSON["result"].(string); !strings.HasPrefix(r, "ERR:fn:digest_mismatch:") {
		t.Fatalf("pinned row after a code change: %s", got.Raw)
	}
	// Where the bytes went: R2 in the worker (nothing in D1's module_blobs),
	// the database's module_blobs table on the host.
	var chunks int
	if err := tg.DB(t).QueryRow(`SELECT COUNT(*) FROM module_blobs`).Scan(&chunks); err != nil {
		t.Fatal(err)
	}
	if inR2 := tg.Name == "worker"; inR2 != (chunks == 0) {
		t.Fatalf("%s: %d module_blobs rows", tg.Name, chunks)
	}
	createRow(t, h, map[string]any{"key": "S_NO_MODULE", "type": "fn", "target": "s_nothing_here"})
	if r, _ := dispatchCall(t, h, "S_NO_MODULE", "").JSON["result"].(string); !strings.HasPrefix(r, "ERR:fn:unknown_target:") {
		t.Fatalf("unknown module: %q", r)
	}
}

// suiteFnCostlyModules: modules that are small to send and expensive to
// compile (50 million locals in 41 bytes, a million nested blocks, a br_table
// of a million labels) are refused at once with module_too_complex:<bound>, a
// how_to_fix and the bound, and nothing is stored.
func suiteFnCostlyModules(t *testing.T, tg *target) {
	h := tg.host
	countChunks := func() int {
		var n int
		if err := tg.DB(t).QueryRow(`SELECT COUNT(*) FROM module_blobs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	chunks := countChunks()
	for _, c := range []struct {
		name, what string
		n          int
		why        string
	}{
		{"s_locals", "locals", 50_000_000, "locals"},
		{"s_nesting", "nesting", 1_000_000, "body_size"}, // 3 MB of code in one function
		{"s_deep", "nesting", 300_000, "nesting"},
		{"s_br_table", "br_table", 1_000_000, "br_table"},
	} {
		start := time.Now()
		got := h.do(t, req{Method: "PUT", Path: "/api/modules/" + c.name, Body: wasmexamples.Costly(c.what, c.n),
			Header: map[string]string{"Content-Type": "application/wasm"}})
		took := time.Since(start)
		expect(t, got, 422, map[string]any{"error": "module_too_complex:" + c.why, "state_changed": false})
		if fix, _ := got.JSON["how_to_fix"].(string); fix == "" {
			t.Errorf("%s: no how_to_fix: %s", c.name, got.Raw)
		}
		if took > 10*time.Second {
			t.Errorf("%s: refused after %v", c.name, took)
		}
		expect(t, h.do(t, req{Method: "GET", Path: "/api/modules/" + c.name}), 404, nil)
	}
	list := h.do(t, req{Method: "GET", Path: "/api/modules"})
	if strings.Contains(string(list.Raw), `"s_locals"`) || strings.Contains(string(list.Raw), `"s_br_table"`) {
		t.Fatalf("a refused module is listed: %s", list.Raw)
	}
	if n := countChunks(); n != chunks {
		t.Fatalf("module_blobs went from %d to %d rows", chunks, n)
	}
}
