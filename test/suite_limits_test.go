package test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/test/modelserver"
)

// suiteLimits: a token's rate, calls per day and USD budgets are refused at
// the gate with the seed-style literal reasons, 429 and Retry-After, recorded
// as receipts, on REST and MCP alike; bad limits mint nothing. The count is
// in the database, so it holds on every host (the worker in workerd too).
func suiteLimits(t *testing.T, tg *target, up *upstream, ms *modelserver.Server) {
	h := tg.host
	createRow(t, h, map[string]any{"key": "S_LIM", "type": "http", "target": "GET " + up.URL + "/lim?q=$1"})

	// Bad limits: a clear error, and no token minted.
	before := len(h.do(t, req{Method: "GET", Path: "/api/tokens"}).JSON["tokens"].([]any))
	for _, bad := range []map[string]any{{"rate": "2/fortnight"}, {"rate": "0/minute"}, {"burst": 3}, {"budget_usd_day": -1}, {"calls_day": -2}, {"rate": 2}} {
		bad["keys"] = []string{"S_LIM"}
		got := h.do(t, req{Method: "POST", Path: "/api/tokens", Body: bad})
		if got.Status != 400 || got.JSON["error"] != "invalid_request" || got.JSON["state_changed"] != false {
			t.Fatalf("mint %v: %d %s", bad, got.Status, got.Raw)
		}
	}
	if after := len(h.do(t, req{Method: "GET", Path: "/api/tokens"}).JSON["tokens"].([]any)); after != before {
		t.Fatalf("bad limits minted tokens: %d → %d", before, after)
	}

	// Rate: one call an hour, so the second is refused, with Retry-After.
	secret, id, scope := mint(t, h, map[string]any{"keys": []string{"S_LIM"}, "rate": "1/hour"})
	if scope["rate"] != "1/hour" {
		t.Fatalf("minted scope %v", scope)
	}
	if got := h.do(t, req{Method: "GET", Path: "/api/tokens/" + id}); got.JSON["rate"] != "1/hour" {
		t.Fatalf("stored token %s", got.Raw)
	}
	expect(t, tokenCall(t, h, secret, "S_LIM", "a"), 200, map[string]any{"ok": true, "ran": true})
	got := tokenCall(t, h, secret, "S_LIM", "b")
	refused(t, h, got, 429, "rate_limited:1/hour")
	if wait, _ := strconv.Atoi(got.Header.Get("Retry-After")); wait < 3000 || wait > 3600 {
		t.Fatalf("Retry-After %q", got.Header.Get("Retry-After"))
	}
	// The same refusal through MCP, recorded the same way.
	mcp := connectMCP(t, h, "Authorization", "Bearer "+secret)
	res := mcp.call(t, "call_capability", map[string]any{"key": "S_LIM", "args": "c"})
	sc := callFields(t, res)
	if !res.IsError || sc["error"] != "rate_limited:1/hour" || sc["ran"] != false {
		t.Fatalf("MCP refusal: %v %q", sc, texts(res))
	}
	confirmed(t, h, sc["invocation_id"].(string), "RECORDED_NOT_MATERIAL")

	// Burst: "2/hour" with burst 3 lets three through at once.
	secret, _, _ = mint(t, h, map[string]any{"keys": []string{"S_LIM"}, "rate": "2/hour", "burst": 3})
	for i := range 3 {
		expect(t, tokenCall(t, h, secret, "S_LIM", fmt.Sprint(i)), 200, map[string]any{"ok": true})
	}
	refused(t, h, tokenCall(t, h, secret, "S_LIM", "x"), 429, "rate_limited:2/hour")

	// Calls per day; a refusal does not count as a call.
	secret, _, _ = mint(t, h, map[string]any{"keys": []string{"S_LIM"}, "calls_day": 2})
	expect(t, tokenCall(t, h, secret, "S_LIM", "1"), 200, map[string]any{"ok": true})
	expect(t, tokenCall(t, h, secret, "S_LIM", "2"), 200, map[string]any{"ok": true})
	got = tokenCall(t, h, secret, "S_LIM", "3")
	refused(t, h, got, 429, "budget_exhausted:2>=2")
	// The message names the limit as it is minted (calls_day), so the owner
	// can find it.
	if msg, _ := got.JSON["message"].(string); got.JSON["budget"] != "calls_day" || got.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(msg, "this token's calls_day is spent: 2 of 2") {
		t.Fatalf("calls_day refusal %s %v", got.Raw, got.Header)
	}
	refused(t, h, tokenCall(t, h, secret, "S_LIM", "4"), 429, "budget_exhausted:2>=2")

	// USD budgets, from the receipts' cost_usd: each call of the agent row
	// costs grokCost(1000, 50) = $0.00375.
	createRow(t, h, map[string]any{"key": "S_LIM_AGENT", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"content": "You are the suite's budget test."})
	reply := modelserver.Reply{Content: "[REPLY]ok[/REPLY]", Usage: &modelserver.Usage{PromptTokens: 1000, CompletionTokens: 50}}
	secret, _, _ = mint(t, h, map[string]any{"keys": []string{"S_LIM_AGENT"}, "budget_usd_day": 0.005})
	ms.Script(reply, reply)
	for range 2 {
		expect(t, tokenCall(t, h, secret, "S_LIM_AGENT", "hi"), 200, map[string]any{"ok": true})
	}
	pending := ms.Pending()
	got = tokenCall(t, h, secret, "S_LIM_AGENT", "hi")
	refused(t, h, got, 429, "budget_exhausted:0.0075>=0.005")
	if got.JSON["budget"] != "usd_day" || !strings.Contains(got.JSON["message"].(string), "US dollars today") || ms.Pending() != pending {
		t.Fatalf("usd_day refusal %s", got.Raw)
	}
	secret, _, _ = mint(t, h, map[string]any{"keys": []string{"S_LIM_AGENT"}, "budget_usd_month": 0.003})
	ms.Script(reply)
	expect(t, tokenCall(t, h, secret, "S_LIM_AGENT", "hi"), 200, map[string]any{"ok": true})
	got = tokenCall(t, h, secret, "S_LIM_AGENT", "hi")
	refused(t, h, got, 429, "budget_exhausted:0.00375>=0.003")
	if got.JSON["budget"] != "usd_month" {
		t.Fatalf("usd_month refusal %s", got.Raw)
	}

	// Inside one call: an agent that keeps calling stops at the model request
	// that finds the spend at the cap (two of its six rounds at $0.00375).
	createRow(t, h, map[string]any{"key": "S_LIM_TOOL", "type": "http", "target": "GET " + up.URL + "/lim?q=$1", "category": "s_lim_tools"})
	createRow(t, h, map[string]any{"key": "S_LIM_LOOP", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"allowed_categories": "s_lim_tools", "content": "You call S_LIM_TOOL until told to stop."})
	loop := modelserver.Reply{Content: "[S_LIM_TOOL]again[/S_LIM_TOOL]", Usage: reply.Usage}
	secret, _, _ = mint(t, h, map[string]any{"keys": []string{"S_LIM_LOOP", "S_LIM_TOOL"}, "budget_usd_day": 0.005})
	ms.Script(loop, loop) // a third request would find the script exhausted
	got = tokenCall(t, h, secret, "S_LIM_LOOP", "go")
	if res, _ := got.JSON["result"].(string); got.Status != 200 || !strings.HasPrefix(res, "ERR:gate:budget_exhausted:0.0075>=0.005 — ") || ms.Pending() != 0 {
		t.Fatalf("one call of a $0.005 token that keeps calling: %s", got.Raw)
	}
	refused(t, h, tokenCall(t, h, secret, "S_LIM_LOOP", "go"), 429, "budget_exhausted:0.0075>=0.005")
}
