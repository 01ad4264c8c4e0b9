package test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/rerank"
	"github.com/rowcall/rowcall/test/modelserver"
)

// spendEnv is a host's environment for a priced stand-in model: suite-1
// costs grokCost(1000, 50) = $0.00375 per request answered with spendUsage.
func spendEnv(ms *modelserver.Server, extra ...string) []string {
	return append([]string{"SUITE_API_KEY=" + suiteSecret, "ROWCALL_MODEL_PROVIDERS=suite=" + ms.URL,
		fmt.Sprintf(`ROWCALL_MODEL_PRICES={"suite-1":{"input":%g,"output":%g}}`, grokPriceIn, grokPriceOut)}, extra...)
}

var spendUsage = &modelserver.Usage{PromptTokens: 1000, CompletionTokens: 50}

// rerankRows writes the rerank row and two rows an ask for "refund" finds.
func rerankRows(t *testing.T, h *host) {
	createRow(t, h, map[string]any{"key": "ASK_RERANK", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"category": "system", "content": "# WHAT: Reorders ask's best candidates for a question\n" + rerank.Prompt})
	createRow(t, h, map[string]any{"key": "RR_REFUND_CARD", "type": "http", "target": "GET https://api.example.test/refund?c=$1",
		"content": "# WHAT: Refund a card charge in full\n# WHEN_TO_USE: a customer is owed a refund"})
	createRow(t, h, map[string]any{"key": "RR_REFUND_EXPORT", "type": "http", "target": "GET https://api.example.test/export",
		"content": "# WHAT: Export refund records to a CSV report\n# WHEN_TO_USE: an accountant wants refund history"})
}

// askRefund asks for "refund" as r says (NoAuth and a header for a token,
// NoAuth alone for anonymous) and checks that both rows are answered.
func askRefund(t *testing.T, h *host, r req) []string {
	t.Helper()
	r.Method, r.Path = "GET", "/api/dispatch?ask="+url.QueryEscape("refund")+"&limit=5"
	got := h.do(t, r)
	expect(t, got, 200, nil)
	var keys []string
	for _, m := range got.JSON["matches"].([]any) {
		keys = append(keys, m.(map[string]any)["key"].(string))
	}
	if !strings.Contains(strings.Join(keys, ","), "RR_REFUND_CARD") || !strings.Contains(strings.Join(keys, ","), "RR_REFUND_EXPORT") {
		t.Fatalf("ask answered %v: %s", keys, got.Raw)
	}
	return keys
}

// rerankReceipts lists the rerank row's receipts: token id, actor, outcome.
func rerankReceipts(t *testing.T, h *host) []string {
	t.Helper()
	rows, err := h.db(t).Query(`SELECT COALESCE(token_id, ''), actor, outcome FROM receipts WHERE key = 'ASK_RERANK' ORDER BY started_at, id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var tok, actor, outcome string
		rows.Scan(&tok, &actor, &outcome)
		out = append(out, tok+" "+actor+" "+outcome)
	}
	return out
}

// Ask's rerank is a call made for who asked: a token's rerank is charged to
// the token (its rate and calls per day, its id on the receipt), so once the
// token's one call of the hour went to a rerank, its asks answer unreranked
// with no model request (REST and MCP alike) and its own call is refused;
// anonymous asks on a public host are not reranked at all unless the
// operator opts in with a rate (--ask-rerank-anonymous), which all
// anonymous callers share.
func TestAskRerankIsChargedToTheAsker(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = suiteSecret
	ms.Fallback(func(modelserver.Request) modelserver.Reply {
		return modelserver.Reply{Content: "RR_REFUND_EXPORT\nRR_REFUND_CARD", Usage: spendUsage}
	})
	h := startHost(t, []string{"--public-reads"}, spendEnv(ms, "ROWCALL_ASK_RERANK=ASK_RERANK")...)
	rerankRows(t, h)

	secret, id, _ := mint(t, h, map[string]any{"keys": []string{"RR_REFUND_CARD", "RR_REFUND_EXPORT"},
		"budget_usd_day": 1, "rate": "1/hour", "calls_day": 1})
	bearer := map[string]string{"Authorization": "Bearer " + secret}
	if keys := askRefund(t, h, req{NoAuth: true, Header: bearer}); keys[0] != "RR_REFUND_EXPORT" {
		t.Fatalf("the token's first ask was not reranked: %v", keys)
	}
	if got := rerankReceipts(t, h); len(got) != 1 || got[0] != id+" "+rerank.Actor+" ok" {
		t.Fatalf("the rerank's receipt (token id, actor, outcome): %q, want %q", got, id+" "+rerank.Actor+" ok")
	}
	for range 5 {
		askRefund(t, h, req{NoAuth: true, Header: bearer})
	}
	mcp := connectMCP(t, h, "Authorization", "Bearer "+secret)
	for range 3 {
		res := mcp.call(t, "search_capabilities", map[string]any{"query": "refund"})
		if res.IsError || len(structured(t, res.StructuredContent)["matches"].([]any)) != 2 {
			t.Fatalf("search_capabilities: %q", texts(res))
		}
	}
	if n := len(ms.Requests()); n != 1 {
		t.Fatalf("a token of 1 call an hour made %d model requests through ask and search_capabilities, want 1", n)
	}
	refused(t, h, tokenCall(t, h, secret, "RR_REFUND_CARD", "ch_1"), 429, "rate_limited:1/hour")

	// Anonymous: no rerank without the operator's opt-in.
	for range 5 {
		askRefund(t, h, req{NoAuth: true})
	}
	if n := len(ms.Requests()); n != 1 {
		t.Fatalf("anonymous asks made %d model requests without --ask-rerank-anonymous", n-1)
	}
	// The owner's asks are reranked, as the owner's own calls.
	askRefund(t, h, req{})
	if n := len(ms.Requests()); n != 2 {
		t.Fatalf("the owner's ask made %d model requests, want 1", n-1)
	}

	// Opted in: every anonymous caller shares one rate.
	ms2 := modelserver.Start(t)
	ms2.Key = suiteSecret
	ms2.Fallback(func(modelserver.Request) modelserver.Reply {
		return modelserver.Reply{Content: "RR_REFUND_EXPORT\nRR_REFUND_CARD", Usage: spendUsage}
	})
	open := startHost(t, []string{"--public-reads", "--ask-rerank-anonymous", "2/hour"}, spendEnv(ms2, "ROWCALL_ASK_RERANK=ASK_RERANK")...)
	rerankRows(t, open)
	for range 6 {
		askRefund(t, open, req{NoAuth: true})
	}
	if n := len(ms2.Requests()); n != 2 {
		t.Fatalf("6 anonymous asks at 2/hour made %d model requests, want 2", n)
	}
	got := rerankReceipts(t, open)
	want := []string{"anonymous ask_rerank ok", "anonymous ask_rerank ok"}
	for range 4 {
		want = append(want, "anonymous ask_rerank refused:rate_limited:2/hour")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("anonymous reranks' receipts:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A budget holds inside one call: every model request of a call tree sees
// its token's running spend, so an agent that keeps calling (six rounds
// before round_limit) stops at the round after the spend reached the cap,
// with the seed-style budget_exhausted:<spent>>=<cap>.
func TestBudgetHoldsInsideOneCall(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = suiteSecret
	ms.Fallback(func(modelserver.Request) modelserver.Reply {
		return modelserver.Reply{Content: "[SP_ECHO]again[/SP_ECHO]", Usage: spendUsage}
	})
	h := startHost(t, allowLoopback, spendEnv(ms)...)
	up := suiteUpstream(t)
	createRow(t, h, map[string]any{"key": "SP_ECHO", "type": "http", "target": "GET " + up.URL + "/echo?q=$1", "category": "sp_tools"})
	createRow(t, h, map[string]any{"key": "SP_LOOP", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"allowed_categories": "sp_tools", "content": "You call SP_ECHO until told to stop."})
	secret, _, _ := mint(t, h, map[string]any{"keys": []string{"SP_LOOP", "SP_ECHO"}, "budget_usd_day": 0.005})

	got := tokenCall(t, h, secret, "SP_LOOP", "go")
	expect(t, got, 200, map[string]any{"ok": false})
	if res, _ := got.JSON["result"].(string); !strings.HasPrefix(res, "ERR:gate:budget_exhausted:0.0075>=0.005 — ") {
		t.Fatalf("a call of a $0.005 token that keeps calling: %s", got.Raw)
	}
	if n := len(ms.Requests()); n != 2 {
		t.Fatalf("one call of a $0.005/day token made %d model requests at $0.00375, want 2", n)
	}
	if rc := receipt(t, h, got); rc["cost_usd"] != 0.0075 || rc["outcome"] != "ERR:gate:budget_exhausted" {
		t.Fatalf("receipt %v", rc)
	}
	refused(t, h, tokenCall(t, h, secret, "SP_LOOP", "go"), 429, "budget_exhausted:0.0075>=0.005")
}

// Parallel calls overshoot a budget by at most one model request (when no
// request costs more than the most one has cost before): each request in
// flight holds an estimate of its cost, and a token's first priced request
// goes out alone. Ten calls at once of a $0.005 token, $0.00375 a request:
// two requests, $0.0075 (docs/security.md states the bound).
func TestParallelCallsBoundTheBudget(t *testing.T) {
	ms := modelserver.Start(t)
	ms.Key = suiteSecret
	ms.Fallback(func(modelserver.Request) modelserver.Reply {
		return modelserver.Reply{Content: "[REPLY]ok[/REPLY]", Usage: spendUsage, Delay: 100 * time.Millisecond}
	})
	h := startHost(t, allowLoopback, spendEnv(ms)...)
	createRow(t, h, map[string]any{"key": "SP_ONE", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"content": "You answer once."})
	secret, id, _ := mint(t, h, map[string]any{"keys": []string{"SP_ONE"}, "budget_usd_day": 0.005})

	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	for range 10 {
		wg.Go(func() {
			got, err := h.send(req{Method: "POST", Path: "/api/dispatch", NoAuth: true,
				Header: map[string]string{"Authorization": "Bearer " + secret}, Body: map[string]any{"key": "SP_ONE", "body": "hi"}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				answers[err.Error()]++
			case got.Status == 200 && got.JSON["ok"] == true:
				answers["ok"]++
			case got.Status == 200 && strings.HasPrefix(fmt.Sprint(got.JSON["result"]), "ERR:gate:budget_exhausted:"):
				answers["stopped before its request"]++
			case got.Status == 429 && strings.HasPrefix(fmt.Sprint(got.JSON["error"]), "budget_exhausted:"):
				answers["refused at the gate"]++
			default:
				answers[fmt.Sprintf("%d %s", got.Status, got.Raw)]++
			}
		})
	}
	wg.Wait()
	t.Logf("ten calls at once: %v", answers)
	var spent float64
	h.db(t).QueryRow(`SELECT COALESCE(SUM(cost_usd), 0) FROM receipts WHERE token_id = ?`, id).Scan(&spent)
	if n := len(ms.Requests()); n != 2 || answers["ok"] != 2 || answers["ok"]+answers["stopped before its request"]+answers["refused at the gate"] != 10 {
		t.Fatalf("ten calls at once of a $0.005 token: %d model requests, answers %v; want 2 requests (the cap plus one)", n, answers)
	}
	if spent != 0.0075 {
		t.Fatalf("spent $%g, want $0.0075", spent)
	}
}
