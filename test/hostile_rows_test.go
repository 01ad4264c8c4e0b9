package test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rowcall/rowcall/internal/dispatch"
	"github.com/rowcall/rowcall/test/modelserver"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// fanOut is a flow payload of n calls of key: one block of n branches, or n
// steps one after the other.
func fanOut(key string, n int, block bool) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = key + ": x"
		if block {
			parts[i] += fmt.Sprintf(" => b%d", i)
		}
	}
	if block {
		return "{ " + strings.Join(parts, " | ") + " }"
	}
	return strings.Join(parts, "\n> ")
}

// A row author's flow that multiplies its calls — one that fans out into
// itself (3 branches, 8 deep: 3^8 calls), or 64 steps of 64 — ends after
// dispatch.MaxCalls nested calls with ERR:dispatch:too_many_calls, its trace
// holding no more receipts than that, instead of running (and recording)
// every call the depth limit alone would allow. Calls of the host's own API
// through $SELF (each a new top-level call, in another trace) count in the
// count of the call that made them.
func TestFlowFanOutIsBounded(t *testing.T) {
	h := startHost(t, nil)
	echo, _ := wasmexamples.ByName("echo")
	expect(t, putModule(t, h, "echo", echo.Wasm), 200, nil)
	createRow(t, h, map[string]any{"key": "ECHO", "type": "fn", "target": "echo", "content": echo.Content})
	createRow(t, h, map[string]any{"key": "FAN_SELF", "type": "flow", "content": "# WHAT: fans out into itself\n" + fanOut("FAN_SELF", 3, true)})
	createRow(t, h, map[string]any{"key": "FAN_MID", "type": "flow", "content": "# WHAT: 64 echoes\n" + fanOut("ECHO", 64, false)})
	createRow(t, h, map[string]any{"key": "FAN_TOP", "type": "flow", "content": "# WHAT: 64 flows of 64\n" + fanOut("FAN_MID", 64, true)})

	want := fmt.Sprintf("ERR:dispatch:too_many_calls:%d — one call makes at most %d nested calls in all", dispatch.MaxCalls, dispatch.MaxCalls)
	for _, key := range []string{"FAN_SELF", "FAN_TOP"} {
		got := dispatchCall(t, h, key, "")
		expect(t, got, 200, map[string]any{"ok": false})
		trace, _ := got.JSON["trace"].(string)
		list, _ := h.do(t, req{Method: "GET", Path: "/api/receipts?trace=" + trace}).JSON["receipts"].([]any)
		if len(list) == 0 || len(list) > dispatch.MaxCalls+1 {
			t.Fatalf("%s: %d receipts in its trace, want at most %d (the call and its nested calls)", key, len(list), dispatch.MaxCalls+1)
		}
		if key == "FAN_TOP" && !strings.HasPrefix(got.JSON["result"].(string), want) {
			t.Fatalf("%s: result %q, want %q…", key, got.JSON["result"], want)
		}
	}

	createRow(t, h, map[string]any{"key": "SELF_FAN", "type": "http", "target": "POST $SELF/api/dispatch", "auth": "bearer:ROWCALL_OWNER_KEY",
		"content": "# WHAT: calls FAN_VIA_SELF through this host's API\n" + `{"key":"FAN_VIA_SELF","body":""}`})
	createRow(t, h, map[string]any{"key": "FAN_VIA_SELF", "type": "flow", "content": "# WHAT: fans out through the API\n" + fanOut("SELF_FAN", 3, true)})
	db := h.db(t)
	count := func() (n int) {
		if err := db.QueryRow(`SELECT COUNT(*) FROM receipts`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	var lastSeq int64
	if err := db.QueryRow(`SELECT COALESCE(MAX(seq), 0) FROM receipts`).Scan(&lastSeq); err != nil {
		t.Fatal(err)
	}
	// Whether the top call itself answers ok:false depends on which branch
	// met the limit: an http step's 200 carries an inner failure as its body
	// (or, nested deep enough, a body over the runner's cap). What must hold
	// is the bound, and that the limit is what stopped it.
	expect(t, dispatchCall(t, h, "FAN_VIA_SELF", ""), 200, nil)
	// Each counted SELF_FAN call makes one top-level FAN_VIA_SELF call.
	if n := count() - before; n > 2*dispatch.MaxCalls+1 {
		t.Fatalf("FAN_VIA_SELF: %d receipts, want at most %d", n, 2*dispatch.MaxCalls+1)
	}
	var stopped int
	if err := db.QueryRow(`SELECT COUNT(*) FROM receipts WHERE seq > ? AND outcome LIKE 'ERR:dispatch:too_many_calls%'`, lastSeq).Scan(&stopped); err != nil {
		t.Fatal(err)
	}
	if stopped == 0 {
		t.Fatal("FAN_VIA_SELF: no receipt records ERR:dispatch:too_many_calls")
	}
}

// A caller's argument in a URL's authority (here its port) cannot make the
// rest of the authority a user name and send the row's credential to a host
// of the caller's choosing ("80@evil"): an '@' there is escaped, and the URL
// that leaves is refused as a bad target before anything is sent.
func TestArgumentCannotMoveTheHost(t *testing.T) {
	up := newUpstream(t, openMeteo)
	evil := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback, "AUDIT_API_KEY=sekret-audit-key")
	createRow(t, h, map[string]any{"key": "PORTED", "type": "http", "target": "GET http://127.0.0.1:$1/v1/forecast?latitude=1&longitude=2", "auth": "bearer:AUDIT_API_KEY"})
	upPort, evilPort := up.URL[strings.LastIndexByte(up.URL, ':')+1:], evil.URL[strings.LastIndexByte(evil.URL, ':')+1:]
	secret, _, _ := mint(t, h, map[string]any{"keys": []string{"PORTED"}})

	expect(t, tokenCall(t, h, secret, "PORTED", upPort), 200, map[string]any{"ok": true})
	if got := up.requests(); len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer sekret-audit-key" {
		t.Fatalf("the row's own upstream saw %+v", got)
	}
	got := tokenCall(t, h, secret, "PORTED", upPort+"@127.0.0.1:"+evilPort)
	expect(t, got, 200, map[string]any{"ok": false})
	if r, _ := got.JSON["result"].(string); !strings.HasPrefix(r, "ERR:http:bad_target:") {
		t.Fatalf("result %q, want ERR:http:bad_target:…", r)
	}
	if n := len(evil.requests()); n != 0 {
		t.Fatalf("the caller's host got %d requests, the credential with them: %+v", n, evil.requests())
	}
}

// A token pinned to an fn row's contract stops on every path a call takes —
// the API twice (the row cache, then a speculative run on it) and MCP's
// tools/call answered by the fast path, through call_capability and the
// row's own tool — once the module's code changes, with the same
// contract_changed reason; nothing the pinned token calls runs the new code.
func TestPinnedTokenStopsOnEveryPath(t *testing.T) {
	h := startHost(t, nil)
	echo, _ := wasmexamples.ByName("echo")
	upper, _ := wasmexamples.ByName("upper")
	expect(t, putModule(t, h, "shout", echo.Wasm), 200, nil)
	createRow(t, h, map[string]any{"key": "SHOUT", "type": "fn", "target": "shout", "content": "# WHAT: shout\n[\"$1+\"]"})
	secret, _, scope := mint(t, h, map[string]any{"keys": []string{"SHOUT"}, "pin": []string{"SHOUT"}})
	pinned := scope["pins"].(map[string]any)["SHOUT"].(string)
	s := connectMCP(t, h, "Authorization", "Bearer "+secret)
	if _, ok := s.tools(t)["SHOUT"]; !ok {
		t.Fatal("SHOUT is not listed as a tool")
	}
	viaMCP := func() []*sdk.CallToolResult {
		return []*sdk.CallToolResult{s.call(t, "call_capability", map[string]any{"key": "SHOUT", "args": "hi"}), s.call(t, "SHOUT", map[string]any{"args": "hi"})}
	}
	for range 2 {
		expect(t, tokenCall(t, h, secret, "SHOUT", "hi"), 200, map[string]any{"result": "hi"})
	}
	for _, res := range viaMCP() {
		if res.IsError || texts(res)[0] != "hi" {
			t.Fatalf("before the change: %v", texts(res))
		}
	}

	expect(t, putModule(t, h, "shout", upper.Wasm), 200, nil)
	current := proof(t, dispatchCall(t, h, "SHOUT", "hi"))["contract_sha256"].(string)
	reason := "contract_changed:" + pinned + "!=" + current
	for range 2 {
		refused(t, h, tokenCall(t, h, secret, "SHOUT", "hi"), 409, reason)
	}
	for _, res := range viaMCP() {
		if !res.IsError || !strings.HasPrefix(texts(res)[0], "ERR:"+reason) {
			t.Fatalf("after the change: %v", texts(res))
		}
	}
}

// A token's spend stays spent when its receipts are sealed into segments and
// pruned from the table (--receipt-retain 0): its USD budget is summed from
// the table, so a host that reads it again (here, after a restart) still
// refuses the token, instead of finding nothing spent.
func TestPrunedReceiptsStillCountInBudgets(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = suiteSecret
	env := []string{"SUITE_API_KEY=" + suiteSecret, "ROWCALL_MODEL_PROVIDERS=suite=" + ms.URL,
		fmt.Sprintf(`ROWCALL_MODEL_PRICES={"suite-1":{"input":%g,"output":%g}}`, grokPriceIn, grokPriceOut),
		"ROWCALL_RECEIPT_SEGMENT=2", "ROWCALL_RECEIPT_RETAIN=0s", "ROWCALL_RECEIPT_SEAL_EVERY=20ms"}
	data := t.TempDir()
	env = append(env, "ROWCALL_RECEIPT_ARCHIVE="+filepath.Join(data, "archive"))
	h := startHostIn(t, data, allowLoopback, env...)
	up := newUpstream(t, openMeteo)
	createRow(t, h, map[string]any{"key": "B_AGENT", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"content": "You are the budget test's agent."})
	createRow(t, h, map[string]any{"key": "B_PLAIN", "type": "http", "target": "GET " + up.URL + "/v1/forecast?latitude=1&longitude=2"})
	reply := modelserver.Reply{Content: "[REPLY]ok[/REPLY]", Usage: &modelserver.Usage{PromptTokens: 1000, CompletionTokens: 50}}
	secret, _, _ := mint(t, h, map[string]any{"keys": []string{"B_AGENT"}, "budget_usd_day": 0.005})
	ms.Script(reply, reply)
	for range 2 {
		expect(t, tokenCall(t, h, secret, "B_AGENT", "hi"), 200, map[string]any{"ok": true})
	}
	refused(t, h, tokenCall(t, h, secret, "B_AGENT", "hi"), 429, "budget_exhausted:0.0075>=0.005")
	// The owner's later calls are sealed and pruned: the pruning has passed the token's.
	for range 4 {
		expect(t, dispatchCall(t, h, "B_PLAIN", ""), 200, map[string]any{"ok": true})
	}
	db := h.db(t)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		db.QueryRow(`SELECT COUNT(*) FROM receipts WHERE key = 'B_PLAIN'`).Scan(&n)
		if n <= 1 { // the chain's newest stays
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of B_PLAIN's receipts are still in the table", n)
		}
	}
	h.stop()
	h = startHostIn(t, data, allowLoopback, env...)
	ms.Script(reply)
	refused(t, h, tokenCall(t, h, secret, "B_AGENT", "hi"), 429, "budget_exhausted:0.0075>=0.005")
}
