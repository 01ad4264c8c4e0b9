package test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/rowcall/rowcall/test/modelserver"
)

// Two hosts on one sqld share one count of a token's limits: a burst of calls
// spread over both lets exactly the rate's burst through, a day's calls made
// on one host count on the other, and a budget spent through one is spent on
// the other.
func TestSqldTwoHostsShareLimits(t *testing.T) {
	url := startSqld(t)
	ms := modelserver.Start(t)
	ms.Key = suiteSecret
	env := []string{"SUITE_API_KEY=" + suiteSecret, "ROWCALL_MODEL_PROVIDERS=suite=" + ms.URL,
		fmt.Sprintf(`ROWCALL_MODEL_PRICES={"suite-1":{"input":%g,"output":%g}}`, grokPriceIn, grokPriceOut)}
	flags := append(append([]string{}, allowLoopback...), "--db", url)
	a, b := startHost(t, flags, env...), startHost(t, flags, env...)
	up := suiteUpstream(t)
	createRow(t, a, map[string]any{"key": "LIM_ECHO", "type": "http", "target": "GET " + up.URL + "/lim?q=$1"})

	// 20 calls at once, 10 through each host, on a token with a bucket of 5.
	secret, _, _ := mint(t, a, map[string]any{"keys": []string{"LIM_ECHO"}, "rate": "5/hour"})
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 20 {
		h := []*host{a, b}[i%2]
		wg.Go(func() {
			got, err := h.send(req{Method: "POST", Path: "/api/dispatch", NoAuth: true,
				Header: map[string]string{"Authorization": "Bearer " + secret}, Body: map[string]any{"key": "LIM_ECHO", "body": fmt.Sprint(i)}})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				statuses[0]++
				return
			}
			// A slot refills every 720 s: the next is free in about that (rounded up to
			// whole seconds, from a call that may have started before the one that took the last slot).
			if wait, _ := strconv.Atoi(got.Header.Get("Retry-After")); got.Status == 429 && (got.JSON["error"] != "rate_limited:5/hour" || wait < 690 || wait > 730) {
				t.Errorf("refusal %s, Retry-After %q", got.Raw, got.Header.Get("Retry-After"))
			}
			statuses[got.Status]++
		})
	}
	wg.Wait()
	if statuses[200] != 5 || statuses[429] != 15 {
		t.Fatalf("20 calls over two hosts on a 5/hour token: %v (want 5×200, 15×429)", statuses)
	}

	// Calls per day: one on each host, the third refused on either.
	secret, _, _ = mint(t, b, map[string]any{"keys": []string{"LIM_ECHO"}, "calls_day": 2})
	expect(t, tokenCall(t, a, secret, "LIM_ECHO", "1"), 200, map[string]any{"ok": true})
	expect(t, tokenCall(t, b, secret, "LIM_ECHO", "2"), 200, map[string]any{"ok": true})
	refused(t, a, tokenCall(t, a, secret, "LIM_ECHO", "3"), 429, "budget_exhausted:2>=2")
	refused(t, b, tokenCall(t, b, secret, "LIM_ECHO", "3"), 429, "budget_exhausted:2>=2")

	// A budget spent through a is spent on b: $0.00375 a call, $0.005 a day.
	createRow(t, a, map[string]any{"key": "LIM_AGENT", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"content": "You are the limits test's agent."})
	reply := modelserver.Reply{Content: "[REPLY]ok[/REPLY]", Usage: &modelserver.Usage{PromptTokens: 1000, CompletionTokens: 50}}
	ms.Script(reply, reply)
	secret, _, _ = mint(t, a, map[string]any{"keys": []string{"LIM_AGENT"}, "budget_usd_day": 0.005})
	expect(t, tokenCall(t, a, secret, "LIM_AGENT", "hi"), 200, map[string]any{"ok": true})
	expect(t, tokenCall(t, b, secret, "LIM_AGENT", "hi"), 200, map[string]any{"ok": true})
	refused(t, a, tokenCall(t, a, secret, "LIM_AGENT", "hi"), 429, "budget_exhausted:0.0075>=0.005")
	refused(t, b, tokenCall(t, b, secret, "LIM_AGENT", "hi"), 429, "budget_exhausted:0.0075>=0.005")
}
