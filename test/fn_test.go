package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// putModule registers wasm bytes under name through the API.
func putModule(t *testing.T, h *host, name string, wasm []byte) resp {
	t.Helper()
	return h.do(t, req{Method: "PUT", Path: "/api/modules/" + name, Body: wasm, Header: map[string]string{"Content-Type": "application/wasm"}})
}

// Each example module, in each language, registered and dispatched through the
// HTTP API, its output asserted.
func TestExampleModulesInEveryLanguage(t *testing.T) {
	h := startHost(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	goModule, err := wasmexamples.BuildGo(ctx, "last_reply_of")
	if err != nil {
		t.Fatalf("building the Go example: %v", err)
	}
	langs := map[string]bool{}
	for _, e := range wasmexamples.All() {
		wasm := e.Wasm
		if e.Lang == "go" {
			wasm = goModule
		}
		got := putModule(t, h, e.Name, wasm)
		expect(t, got, 200, map[string]any{"ok": true, "name": e.Name, "size": len(wasm), "version": 1})
		if d := got.JSON["digest"].(string); d != sha(string(wasm)) {
			t.Fatalf("%s digest %s", e.Name, d)
		}
		createRow(t, h, map[string]any{"key": e.Key, "type": "fn", "target": e.Name, "content": e.Content})
		langs[e.Lang] = true
	}
	if len(langs) != 4 {
		t.Fatalf("languages %v", langs)
	}
	result := func(key, body string) string {
		t.Helper()
		got := dispatchCall(t, h, key, body)
		expect(t, got, 200, map[string]any{"ran": true})
		return got.JSON["result"].(string)
	}
	// NOW (C): Pacific time as the seed prints it.
	var now map[string]string
	if err := json.Unmarshal([]byte(result("NOW", "")), &now); err != nil {
		t.Fatalf("NOW: %v", err)
	}
	pacific, _ := time.LoadLocation("America/Los_Angeles")
	wall := time.Now().In(pacific)
	zone, _ := wall.Zone()
	if now["zone"] != zone || now["today"] != wall.Format("2006-01-02") || !strings.HasPrefix(now["iso"], wall.Format("2006-01-02T")) {
		t.Fatalf("NOW %v, want zone %s today %s", now, zone, wall.Format("2006-01-02"))
	}
	for _, f := range []string{"now", "today", "time", "zone", "iso"} {
		if now[f] == "" {
			t.Fatalf("NOW lacks %s: %v", f, now)
		}
	}
	if r := result("UPPER", "hello wörld|again"); r != "HELLO WÖRLD|AGAIN" {
		t.Fatalf("UPPER (AssemblyScript): %q", r)
	}
	if r := result("ECHO", "a b|c"); r != "a b|c" {
		t.Fatalf("ECHO (WAT): %q", r)
	}
	if r := result("LAST_REPLY_OF", "thinking [REPLY]first[/REPLY] then [REPLY]Hi | there![/REPLY] done"); r != "Hi | there!" {
		t.Fatalf("LAST_REPLY_OF (Go): %q", r)
	}
	expect(t, dispatchCall(t, h, "LAST_REPLY_OF", "no reply here"), 200, map[string]any{"ok": false})

	// The seed's fn failures, literally.
	createRow(t, h, map[string]any{"key": "GONE", "type": "fn", "target": "nosuchmodule"})
	expect(t, dispatchCall(t, h, "GONE", ""), 200, map[string]any{"result": "ERR:fn:unknown_target:nosuchmodule"})
	createRow(t, h, map[string]any{"key": "NOT_ARRAY", "type": "fn", "target": "echo", "content": `# WHAT: x
{"a":"$1"}`})
	expect(t, dispatchCall(t, h, "NOT_ARRAY", "x"), 200, map[string]any{"result": "ERR:fn:content_not_array"})
	createRow(t, h, map[string]any{"key": "BAD_JSON", "type": "fn", "target": "echo", "content": "# WHAT: x\n[$$1]"})
	if r := dispatchCall(t, h, "BAD_JSON", "not json").JSON["result"].(string); !strings.HasPrefix(r, "ERR:fn:bad_content_json:") {
		t.Fatalf("bad content json: %q", r)
	}

	// Listing and deleting: a module in use is refused with its rows.
	expect(t, h.do(t, req{Method: "GET", Path: "/api/modules"}), 200, nil)
	got := h.do(t, req{Method: "DELETE", Path: "/api/modules/echo"})
	expect(t, got, 409, map[string]any{"error": "module_in_use", "rows": []string{"BAD_JSON", "ECHO", "NOT_ARRAY"}})
}

// The seed's BLOOIO_FINISH shape, end to end: an fn step extracts the last
// [REPLY] and an http step sends it to a loopback upstream.
func TestBlooioFinishFlow(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"sent":true}`) })
	h := startHost(t, allowLoopback, "BLOOIO_API_KEY=bk-secret-7781")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	goModule, err := wasmexamples.BuildGo(ctx, "last_reply_of")
	if err != nil {
		t.Fatal(err)
	}
	expect(t, putModule(t, h, "last_reply_of", goModule), 200, nil)
	e, _ := wasmexamples.ByName("last_reply_of")
	createRow(t, h, map[string]any{"key": "LAST_REPLY_OF", "type": "fn", "target": "last_reply_of", "content": e.Content})
	createRow(t, h, map[string]any{"key": "SEND_BY_CHANNEL", "type": "http", "target": "POST " + up.URL + "/send/$1", "auth": "bearer:BLOOIO_API_KEY",
		"content": "# WHAT: send\n{\"to\":\"$2\",\"text\":\"$3+\"}"})
	createRow(t, h, map[string]any{"key": "BLOOIO_FINISH", "type": "flow", "content": `# Phase C of the inbound turn: given the full agent output text in $1, extract the
#   LAST [REPLY], send via blooio to $2, return the send result.
# $1=agent output text. $2=recipient phone.
LAST_REPLY_OF: $1
> SEND_BY_CHANNEL: blooio|$2|$PREV`})
	got := dispatchCall(t, h, "BLOOIO_FINISH", `ok [REPLY]draft[/REPLY] [REPLY]See you at 5 "sharp"[/REPLY]|+15551234567`)
	expect(t, got, 200, map[string]any{"ok": true, "result": `HTTP 200:{"sent":true}`})
	seen := up.requests()
	if len(seen) != 1 || seen[0].Path != "/send/blooio" || seen[0].Body != `{"to":"+15551234567","text":"See you at 5 \"sharp\""}` ||
		seen[0].Header.Get("Authorization") != "Bearer bk-secret-7781" {
		t.Fatalf("upstream saw %+v", seen)
	}
}

// Hostile modules each give their clear error, and the host answers the next
// call normally.
func TestHostileModules(t *testing.T) {
	h := startHost(t, []string{"--fn-timeout", "3s"})
	hostile := wasmexamples.Hostile()
	builtin, _ := wasmexamples.ByName("echo")
	expect(t, putModule(t, h, "echo", builtin.Wasm), 200, nil)
	createRow(t, h, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": builtin.Content})
	for _, c := range []struct{ module, want string }{
		{"loop", `^ERR:fn:timeout:3s$`},
		{"grow", `^ERR:fn:memory_limit:\d+`},
		{"flood", `^ERR:fn:output_limit:\d+$`},
		{"trap", `^ERR:fn:trap:.*unreachable`},
		{"exit", `^ERR:fn:exit:\d+`},
	} {
		t.Run(c.module, func(t *testing.T) {
			expect(t, putModule(t, h, c.module, hostile[c.module]), 200, nil)
			key := "HOSTILE_" + strings.ToUpper(c.module)
			createRow(t, h, map[string]any{"key": key, "type": "fn", "target": c.module})
			got := dispatchCall(t, h, key, "")
			if r := got.JSON["result"].(string); got.Status != 200 || !regexp.MustCompile(c.want).MatchString(r) {
				t.Fatalf("%d %q, want %s", got.Status, r, c.want)
			}
			expect(t, dispatchCall(t, h, "ECHO", "still here"), 200, map[string]any{"ok": true, "result": "still here"})
		})
	}
	for _, c := range []struct{ module, code, say string }{
		{"forbidden", "module_forbidden_import", "env.foo"},
		{"notwasm", "module_not_wasm", "not"},
		{"reactor", "module_not_command", "_start"},
	} {
		got := putModule(t, h, c.module, hostile[c.module])
		expect(t, got, 422, map[string]any{"error": c.code, "state_changed": false})
		if !strings.Contains(string(got.Raw), c.say) {
			t.Fatalf("%s: %s", c.module, got.Raw)
		}
		expect(t, h.do(t, req{Method: "GET", Path: "/api/modules/" + c.module}), 404, nil)
	}
	expect(t, dispatchCall(t, h, "ECHO", "fine"), 200, map[string]any{"result": "fine"})

	// One call's memory never reaches the next, though the host reuses buffers.
	for _, m := range []string{"spill", "peek"} {
		expect(t, putModule(t, h, m, hostile[m]), 200, nil)
		createRow(t, h, map[string]any{"key": strings.ToUpper(m), "type": "fn", "target": m})
	}
	for range 5 {
		expect(t, dispatchCall(t, h, "SPILL", ""), 200, map[string]any{"ok": true, "result": ""})
		expect(t, dispatchCall(t, h, "PEEK", ""), 200, map[string]any{"result": strings.Repeat("0", 64)})
	}
}

// Changing a module's code changes the contract fingerprint of the rows that
// run it, so a pinned token stops.
func TestModuleCodeIsPartOfTheContract(t *testing.T) {
	h := startHost(t, nil)
	echo, _ := wasmexamples.ByName("echo")
	upper, _ := wasmexamples.ByName("upper")
	expect(t, putModule(t, h, "shout", echo.Wasm), 200, map[string]any{"version": 1})
	createRow(t, h, map[string]any{"key": "SHOUT", "type": "fn", "target": "shout", "content": "# WHAT: shout\n[\"$1+\"]"})
	tok, _, _ := mint(t, h, map[string]any{"keys": []string{"SHOUT"}, "pin": []string{"SHOUT"}})
	before := proof(t, dispatchCall(t, h, "SHOUT", "hi"))["contract_sha256"]
	expect(t, tokenCall(t, h, tok, "SHOUT", "hi"), 200, map[string]any{"result": "hi"})
	expect(t, putModule(t, h, "shout", upper.Wasm), 200, map[string]any{"version": 2})
	got := dispatchCall(t, h, "SHOUT", "hi")
	expect(t, got, 200, map[string]any{"result": "HI"})
	if after := proof(t, got)["contract_sha256"]; after == before {
		t.Fatal("new module code kept the contract fingerprint")
	}
	expect(t, tokenCall(t, h, tok, "SHOUT", "hi"), 409, nil)
	// A stale If-Match on the module is refused.
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/modules/shout", Body: echo.Wasm, Header: map[string]string{"If-Match": `"1"`, "Content-Type": "application/wasm"}}), 412, nil)
}
