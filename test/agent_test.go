package test

import (
	"encoding/json"
	"fmt"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/test/modelserver"
)

// The credential the agent rows name, and the price the hosts are given.
const (
	grokKey      = "xai-test-5f1c0e8d2b7a4c69"
	grokPriceIn  = 3.0  // USD per 1M prompt tokens
	grokPriceOut = 15.0 // USD per 1M completion tokens
)

// startAgentHost runs a host whose default model provider is ms, with a
// price table for grok-4.3 and tiny retry delays.
func startAgentHost(t *testing.T, ms *modelserver.Server, extra ...string) *host {
	t.Helper()
	prices := filepath.Join(t.TempDir(), "prices.json")
	table := fmt.Sprintf(`{"grok-4.3":{"input":%g,"output":%g}}`, grokPriceIn, grokPriceOut)
	if err := os.WriteFile(prices, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := append([]string{"--allow-outbound", "127.0.0.1/32", "--model-provider", "xai=" + ms.URL,
		"--prices", prices, "--model-retry-base", "1ms"}, extra...)
	return startHost(t, flags, "GROK_API_KEY="+grokKey)
}

func agentRowSpec(key, content, allowed string) map[string]any {
	return map[string]any{"key": key, "type": "agent", "target": "grok-4.3", "auth": "bearer:GROK_API_KEY",
		"content": content, "allowed_categories": allowed, "category": "agents"}
}

func grokCost(prompt, completion int64) float64 {
	return (float64(prompt)*grokPriceIn + float64(completion)*grokPriceOut) / 1e6
}

// receipt fetches a call's receipt through the public confirm endpoint.
func receipt(t *testing.T, h *host, got resp) map[string]any {
	t.Helper()
	id := proof(t, got)["invocation_id"].(string)
	c := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id, NoAuth: true})
	expect(t, c, 200, map[string]any{"confirmed": true})
	return c.JSON["receipt"].(map[string]any)
}

type traceRow struct {
	ID, Key, Parent, Outcome string
	Cost                     float64
}

// traceReceipts reads every receipt of a trace from the host's database.
func traceReceipts(t *testing.T, h *host, trace string) []traceRow {
	t.Helper()
	rows, err := h.db(t).Query(`SELECT id, key, COALESCE(parent, ''), outcome, cost_usd FROM receipts WHERE trace = ? ORDER BY started_at, id`, trace)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []traceRow
	for rows.Next() {
		var r traceRow
		if err := rows.Scan(&r.ID, &r.Key, &r.Parent, &r.Outcome, &r.Cost); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

const labPrompt = "You are a friendly peptide concierge (LAB TEST v1). One warm sentence,\nthen end with [REPLY]your text[/REPLY]."

// The seed's PROMPT_LAB_AGENT: one request, one answer, the answer is the result.
func TestAgentOneShot(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = grokKey
	h := startAgentHost(t, ms)
	createRow(t, h, agentRowSpec("PROMPT_LAB_AGENT", labPrompt, ""))
	answer := "So glad you asked! [REPLY]Hi! Our BPC-157 is in stock — want me to reserve one?[/REPLY]"
	ms.Script(modelserver.Reply{Content: answer, Usage: &modelserver.Usage{PromptTokens: 1200, CompletionTokens: 80}})

	got := dispatchCall(t, h, "PROMPT_LAB_AGENT", "do you have bpc-157?")
	expect(t, got, 200, map[string]any{"ok": true, "ran": true, "result": answer})
	rc := receipt(t, h, got)
	if rc["runner"] != "agent" || rc["material"] != true || rc["upstream_status"] != 200.0 || rc["outcome"] != "ok" ||
		math.Abs(rc["cost_usd"].(float64)-grokCost(1200, 80)) > 1e-12 {
		t.Fatalf("receipt %v", rc)
	}
	reqs := ms.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+grokKey || r.Status != 200 {
		t.Fatalf("%s %s %v", r.Method, r.Path, r.Header)
	}
	var body map[string]any
	json.Unmarshal(r.Body, &body)
	if body["model"] != "grok-4.3" || body["stream"] != false || body["tools"] != nil {
		t.Fatalf("request %s", r.Body)
	}
	msgs := r.Chat.Messages
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[0].Text() != labPrompt || msgs[1].Role != "user" || msgs[1].Text() != "do you have bpc-157?" {
		t.Fatalf("messages %s", r.Body)
	}
	if strings.Contains(string(got.Raw), grokKey) {
		t.Fatal("the credential leaked into the answer")
	}
}

// A two-round loop: the model calls an http row by native tool call and an fn
// row (a WebAssembly module) by tag; both run through the dispatcher with their
// own receipts in the agent's trace; the results go back; the model replies.
func TestAgentToolLoop(t *testing.T) {
	up := newUpstream(t, openMeteo)
	ms := modelserver.Start(t)
	ms.Key = grokKey
	h := startAgentHost(t, ms)
	temp := temperatureRow(up.URL)
	temp["input_schema"] = `{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"}},"required":["latitude","longitude"]}`
	createRow(t, h, temp)
	upper, _ := wasmexamples.ByName("upper")
	expect(t, putModule(t, h, "upper", upper.Wasm), 200, nil)
	createRow(t, h, map[string]any{"key": "SHOUT", "type": "fn", "category": "tools", "target": "upper",
		"content": "# WHAT: The text in capitals, for a headline.\n# ARGS: $1+=text\n[\"$1+\"]"})
	createRow(t, h, agentRowSpec("CONCIERGE", "You answer weather questions. Call tools, then end with [REPLY]…[/REPLY].", "tools"))

	ms.Script(
		modelserver.Reply{
			Content:   "Let me look that up. [SHOUT]sf weather[/SHOUT]",
			ToolCalls: []modelserver.ToolCall{{Name: "ZZ_TEST_TEMPERATURE", Arguments: `{"latitude":37.77,"longitude":-122.42}`}},
			Usage:     &modelserver.Usage{PromptTokens: 900, CompletionTokens: 60},
		},
		modelserver.Reply{Content: "[REPLY]It's 15.7°C in San Francisco right now.[/REPLY]", Usage: &modelserver.Usage{PromptTokens: 1400, CompletionTokens: 40}},
	)
	got := dispatchCall(t, h, "CONCIERGE", "how warm is it in SF?")
	expect(t, got, 200, map[string]any{"ok": true, "ran": true, "result": "[REPLY]It's 15.7°C in San Francisco right now.[/REPLY]"})

	// The upstream saw the http call, its arguments rendered as for any caller.
	seen := up.requests()
	if len(seen) != 1 || seen[0].Query != "latitude=37.77&longitude=-122.42&current=temperature_2m" {
		t.Fatalf("upstream saw %+v", seen)
	}
	reqs := ms.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	// Round 1 offered both rows as tools, the typed one with its schema.
	tools := map[string]string{}
	for _, tl := range reqs[0].Chat.Tools {
		tools[tl.Function.Name] = string(tl.Function.Parameters)
	}
	if tools["ZZ_TEST_TEMPERATURE"] != temp["input_schema"] || !strings.Contains(tools["SHOUT"], `"args"`) || len(tools) != 2 {
		t.Fatalf("tools %v", tools)
	}
	// Round 2 carried the tool result as a tool message and the tag result as a user message.
	msgs := reqs[1].Chat.Messages
	if len(msgs) != 5 || msgs[2].Role != "assistant" || len(msgs[2].ToolCalls) != 1 || msgs[3].Role != "tool" ||
		msgs[3].ToolCallID != msgs[2].ToolCalls[0].ID || msgs[4].Role != "user" {
		t.Fatalf("round 2 %s", reqs[1].Body)
	}
	if !strings.HasPrefix(msgs[3].Text(), `HTTP 200:{"current":`) || !strings.Contains(msgs[3].Text(), `"temperature_2m":15.7`) {
		t.Fatalf("tool message %q", msgs[3].Text())
	}
	if want := "Results of the calls you made, in order:\n[RESULT SHOUT]\nSF WEATHER\n[/RESULT SHOUT]"; msgs[4].Text() != want {
		t.Fatalf("fed back %q", msgs[4].Text())
	}

	// Receipts: the agent's, and one per nested call, linked by trace and parent.
	rc := receipt(t, h, got)
	trace := got.JSON["trace"].(string)
	all := traceReceipts(t, h, trace)
	if len(all) != 3 {
		t.Fatalf("trace %s has %d receipts: %+v", trace, len(all), all)
	}
	var keys []string
	for _, r := range all {
		keys = append(keys, r.Key)
		if r.Key != "CONCIERGE" && (r.Parent != rc["invocation_id"] || r.Outcome != "ok") {
			t.Fatalf("nested receipt %+v, want parent %v", r, rc["invocation_id"])
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"CONCIERGE", "SHOUT", "ZZ_TEST_TEMPERATURE"}) {
		t.Fatalf("receipts for %v", keys)
	}
	if math.Abs(rc["cost_usd"].(float64)-grokCost(2300, 100)) > 1e-12 || rc["parent"] != nil {
		t.Fatalf("agent receipt %v", rc)
	}
}

// A tag for a row outside allowed_categories is refused to the model, and the
// row never runs.
func TestAgentRefusedTag(t *testing.T) {
	up := newUpstream(t, openMeteo)
	ms := modelserver.Start(t)
	h := startAgentHost(t, ms)
	createRow(t, h, temperatureRow(up.URL))
	createRow(t, h, map[string]any{"key": "REFUND_ORDER", "type": "http", "category": "billing", "target": "POST " + up.URL + "/refund"})
	createRow(t, h, agentRowSpec("CONCIERGE", "Help the user.", "tools"))
	ms.Script(
		modelserver.Reply{Content: "On it. [REFUND_ORDER]order-42|100[/REFUND_ORDER]"},
		modelserver.Reply{Content: "[REPLY]I can't issue refunds, but a person will follow up.[/REPLY]"},
	)
	got := dispatchCall(t, h, "CONCIERGE", "refund my order")
	expect(t, got, 200, map[string]any{"ok": true, "result": "[REPLY]I can't issue refunds, but a person will follow up.[/REPLY]"})
	if n := len(up.requests()); n != 0 {
		t.Fatalf("the refused row reached its upstream %d times", n)
	}
	reqs := ms.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	fed := reqs[1].Chat.Messages[3].Text()
	want := "[RESULT REFUND_ORDER]\nERR:agent:not_allowed:REFUND_ORDER — this agent may call only rows in the categories tools (its allowed_categories), and REFUND_ORDER is not one of them; nothing ran\n[/RESULT REFUND_ORDER]"
	if !strings.Contains(fed, want) {
		t.Fatalf("fed back %q", fed)
	}
	// The row only refusable by the agent was never dispatched: the trace holds the agent's receipt alone.
	if all := traceReceipts(t, h, got.JSON["trace"].(string)); len(all) != 1 || all[0].Key != "CONCIERGE" {
		t.Fatalf("receipts %+v", all)
	}
	// The offered tools never included it.
	for _, tl := range reqs[0].Chat.Tools {
		if tl.Function.Name == "REFUND_ORDER" {
			t.Fatal("a billing row was offered as a tool")
		}
	}
}

// What real providers do wrong: a 429 then success, 5xx until the retries
// run out, a malformed body, and a request that takes too long.
func TestAgentProviderFailures(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = grokKey
	h := startAgentHost(t, ms, "--model-timeout", "300ms")
	createRow(t, h, agentRowSpec("LAB", labPrompt, ""))

	t.Run("429 then success", func(t *testing.T) {
		n := len(ms.Requests())
		ms.Script(modelserver.Reply{Status: 429, Header: map[string]string{"Retry-After": "0"}}, modelserver.Reply{Content: "[REPLY]hi[/REPLY]"})
		got := dispatchCall(t, h, "LAB", "hello")
		expect(t, got, 200, map[string]any{"ok": true, "result": "[REPLY]hi[/REPLY]"})
		reqs := ms.Requests()[n:]
		if len(reqs) != 2 || reqs[0].Status != 429 || reqs[1].Status != 200 || string(reqs[0].Body) != string(reqs[1].Body) {
			t.Fatalf("%d requests", len(reqs))
		}
		if rc := receipt(t, h, got); rc["upstream_status"] != 200.0 || rc["ok"] != true {
			t.Fatalf("receipt %v", rc)
		}
	})
	t.Run("5xx until the retries run out", func(t *testing.T) {
		n := len(ms.Requests())
		ms.Script(modelserver.Reply{Status: 500}, modelserver.Reply{Status: 502}, modelserver.Reply{Status: 503})
		got := dispatchCall(t, h, "LAB", "hello")
		expect(t, got, 200, map[string]any{"ok": false, "ran": true,
			"result": "ERR:agent:503:The server had an error while processing your request. Sorry about that! (gave up after 3 attempts)"})
		if len(ms.Requests())-n != 3 {
			t.Fatal("want three attempts")
		}
		if rc := receipt(t, h, got); rc["outcome"] != "ERR:agent:503" || rc["material"] != true {
			t.Fatalf("receipt %v", rc)
		}
	})
	t.Run("malformed body", func(t *testing.T) {
		ms.Script(modelserver.Reply{Raw: `{"id":"chatcmpl-9","object":"chat.completion","choices":[{"index":0,"message":{"role":"assist`})
		got := dispatchCall(t, h, "LAB", "hello")
		expect(t, got, 200, map[string]any{"ok": false})
		if r := got.JSON["result"].(string); !strings.HasPrefix(r, "ERR:agent:bad_response:the provider answered 200 with a body that is not a chat completion (unexpected end of JSON input)") {
			t.Fatal(r)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		ms.Script(modelserver.Reply{Delay: 10e9, Content: "too late"})
		got := dispatchCall(t, h, "LAB", "hello")
		expect(t, got, 200, map[string]any{"ok": false, "result": "ERR:agent:timeout:300ms — xai did not answer grok-4.3 in time"})
	})
}

// A dead credential: every call is a 401 that counts toward the row's
// breaker, and the ninth call is refused without reaching the provider.
func TestAgentAuthFailureOpensBreaker(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = "xai-the-real-key-000000000"
	h := startAgentHost(t, ms) // its GROK_API_KEY is not the key the provider accepts
	createRow(t, h, agentRowSpec("DEAD_AGENT", labPrompt, ""))
	masked := grokKey[:3] + strings.Repeat("*", len(grokKey)-7) + grokKey[len(grokKey)-4:] // as the real API writes it
	want := "ERR:agent:401:Incorrect API key provided: " + masked + ". You can find your API key at https://platform.openai.com/account/api-keys."
	for i := range 8 {
		got := dispatchCall(t, h, "DEAD_AGENT", "hello")
		expect(t, got, 200, map[string]any{"ok": false, "ran": true, "result": want})
		if i == 0 {
			if rc := receipt(t, h, got); rc["upstream_status"] != 401.0 || rc["outcome"] != "ERR:agent:401" {
				t.Fatalf("receipt %v", rc)
			}
		}
	}
	open := "ERR:breaker_open:DEAD_AGENT — 8 consecutive auth failures; credential is dead until replaced."
	expect(t, dispatchCall(t, h, "DEAD_AGENT", "hello"), 200, map[string]any{"ok": false, "ran": false, "result": open})
	if n := len(ms.Requests()); n != 8 {
		t.Fatalf("the provider saw %d requests, want 8 (401 is not retried; the open breaker sends nothing)", n)
	}
}

// The seed's ROUTER: includes compose shared prompt blocks in front of the
// row's own content, in the order written, proven by the system message the
// model server received.
func TestAgentRouterIncludes(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = grokKey
	h := startAgentHost(t, ms)
	blocks := []struct{ key, text string }{
		{"BLOCK_VOICE", "Voice: warm, plain, never salesy."},
		{"BLOCK_IMESSAGE", "You are replying over iMessage: short lines, no markdown."},
		{"BLOCK_EMOJI", "At most one emoji per message."},
		{"BLOCK_ROUTING", "Call a capability with [KEY]args[/KEY]; end with [REPLY]text[/REPLY]."},
		{"BLOCK_ARA", "You are Ara, the concierge."},
	}
	var keys, texts []string
	for _, b := range blocks {
		createRow(t, h, map[string]any{"key": b.key, "type": "agent", "target": "grok-4.3", "category": "prompt_blocks", "planner_visible": 0,
			"content": "# WHAT: shared prompt block " + b.key + "\n" + b.text})
		keys, texts = append(keys, b.key), append(texts, b.text)
	}
	router := agentRowSpec("ROUTER", "# WHAT: the inbound-message router\nRoute the user's message to the right capability.", "")
	router["includes"] = strings.Join(keys, ",")
	createRow(t, h, router)
	ms.Script(modelserver.Reply{Content: "[REPLY]Hey! What can I get you? 🙂[/REPLY]"})

	got := dispatchCall(t, h, "ROUTER", "hi")
	expect(t, got, 200, map[string]any{"ok": true, "result": "[REPLY]Hey! What can I get you? 🙂[/REPLY]"})
	reqs := ms.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	want := strings.Join(append(texts, "Route the user's message to the right capability."), "\n\n")
	if sys := reqs[0].Chat.Messages[0]; sys.Role != "system" || sys.Text() != want {
		t.Fatalf("system message:\n%s\nwant:\n%s", sys.Text(), want)
	}
	// Editing a block changes what every including row sends, with no edit to the router.
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/BLOCK_EMOJI", Body: map[string]any{"content": "# WHAT: emoji rule\nNo emoji."}}), 200, nil)
	ms.Script(modelserver.Reply{Content: "[REPLY]Hey! What can I get you?[/REPLY]"})
	dispatchCall(t, h, "ROUTER", "hi")
	if sys := ms.Requests()[1].Chat.Messages[0].Text(); !strings.Contains(sys, "no markdown.\n\nNo emoji.\n\nCall a capability") {
		t.Fatalf("after the edit: %s", sys)
	}
	// Shape mode shows the composed request without sending it or its credential.
	sh := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "ROUTER", "body": "hi", "shape": true}})
	expect(t, sh, 200, map[string]any{"ran": false, "result": "SHAPE:agent:POST " + ms.URL + "/chat/completions"})
	if s := string(sh.Raw); strings.Contains(s, grokKey) || strings.Contains(s, "Authorization") || !strings.Contains(s, "You are Ara, the concierge.") {
		t.Fatalf("shape %s", s)
	}
	if n := len(ms.Requests()); n != 2 {
		t.Fatalf("shape mode sent a request (%d)", n)
	}
	// A missing block stops the call before anything is sent.
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/BLOCK_ARA"}), 200, nil)
	expect(t, dispatchCall(t, h, "ROUTER", "hi"), 200, map[string]any{"ok": false,
		"result": "ERR:agent:include_missing:BLOCK_ARA — includes names BLOCK_ARA, which is not in the directory; create it or take it out of includes"})
	if n := len(ms.Requests()); n != 2 {
		t.Fatalf("a call with a missing block reached the model (%d)", n)
	}
}
