package test

import (
	"math"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/test/modelserver"
)

// suiteAgent: an agent row sends its content to the configured model as the
// system prompt, with the caller's text, the credential the row names and the
// model id; the model's answer is the result, priced from the usage into the
// receipt — the same on every host, the worker included (ROWCALL_MODEL_*
// settings, requests through fetch()).
func suiteAgent(t *testing.T, tg *target, ms *modelserver.Server) {
	h := tg.host
	prompt := "You are the suite's concierge. End with [REPLY]…[/REPLY]."
	createRow(t, h, map[string]any{"key": "S_AGENT", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"content": prompt, "category": "suite_agents"})
	answer := "[REPLY]Hello from " + tg.Name + "'s model.[/REPLY]"
	ms.Script(modelserver.Reply{Content: answer, Usage: &modelserver.Usage{PromptTokens: 1000, CompletionTokens: 50}})
	before := len(ms.Requests())

	got := dispatchCall(t, h, "S_AGENT", "hello there")
	expect(t, got, 200, map[string]any{"ok": true, "ran": true, "result": answer})
	if strings.Contains(string(got.Raw), suiteSecret) {
		t.Fatal("the credential leaked into the answer")
	}
	rc := receipt(t, h, got)
	if rc["runner"] != "agent" || rc["upstream_status"] != 200.0 || rc["outcome"] != "ok" ||
		math.Abs(rc["cost_usd"].(float64)-grokCost(1000, 50)) > 1e-12 {
		t.Fatalf("receipt %v", rc)
	}
	reqs := ms.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	r := reqs[0]
	msgs := r.Chat.Messages
	if r.Header.Get("Authorization") != "Bearer "+suiteSecret || r.Chat.Model != "suite-1" || len(msgs) != 2 ||
		msgs[0].Role != "system" || msgs[0].Text() != prompt || msgs[1].Text() != "hello there" {
		t.Fatalf("model request %s %s", r.Header.Get("Authorization"), r.Body)
	}
}
