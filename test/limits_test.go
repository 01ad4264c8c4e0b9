package test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/rowcall/rowcall/test/modelserver"
)

// Two hosts on one sqld share one count of a token's limits. A small rate's
// calls pass on each host's own bucket and are counted in the shared count
// before they are answered (internal/dispatch, countsAfter): calls made
// through one host are refused on the other, and a burst of calls spread over
// both lets through at least the rate's burst and at most one burst per
// host. A day's calls made on one host count on the other; a budget spent
// through one is spent on the other, passed by one call on a host that last
// read it before the other host's call spent it.
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

	// Five calls through a spend the bucket of 5 for both hosts.
	secret, _, _ := mint(t, a, map[string]any{"keys": []string{"LIM_ECHO"}, "rate": "5/hour"})
	for i := range 5 {
		expect(t, tokenCall(t, a, secret, "LIM_ECHO", fmt.Sprint(i)), 200, map[string]any{"ok": true})
	}
	for _, h := range []*host{b, a} {
		got := tokenCall(t, h, secret, "LIM_ECHO", "6")
		refused(t, h, got, 429, "rate_limited:5/hour")
		if wait, _ := strconv.Atoi(got.Header.Get("Retry-After")); wait < 690 || wait > 730 {
			t.Fatalf("Retry-After %q after a bucket of 5 at 5/hour was spent", got.Header.Get("Retry-After"))
		}
	}

	// 20 calls at once, 10 through each host, on a token with a bucket of 5:
	// from 5 (the bucket) to 10 (a bucket on each host) pass.
	secret, _, _ = mint(t, a, map[string]any{"keys": []string{"LIM_ECHO"}, "rate": "5/hour"})
	var mu sync.Mutex
	statuses, waits := map[int]int{}, []int{}
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
			if got.Status == 429 {
				wait, _ := strconv.Atoi(got.Header.Get("Retry-After"))
				if got.JSON["error"] != "rate_limited:5/hour" {
					t.Errorf("refusal %s", got.Raw)
				}
				waits = append(waits, wait)
			}
			statuses[got.Status]++
		})
	}
	wg.Wait()
	passed := statuses[200]
	t.Logf("20 calls at once over two hosts on 5/hour: %v", statuses)
	if passed < 5 || passed > 10 || statuses[429] != 20-passed {
		t.Fatalf("20 calls over two hosts on a 5/hour token: %v (want 5 to 10 × 200, the rest 429)", statuses)
	}
	// A slot refills every 720 s: the next is free in about that (rounded up to
	// whole seconds), later by 720 s for each call past the bucket. A call is
	// measured at its own time: one whose time is a few milliseconds before
	// that of calls the other host already took can find the bucket spent as of
	// its time by less than a second, and is told to come back in 1 s (the
	// bucket is exact, not padded). At least one refusal sees the bucket spent.
	spent := false
	for _, wait := range waits {
		if wait < 1 || wait > (passed-4)*720+10 {
			t.Fatalf("Retry-After %d with %d calls passed on a bucket of 5 at 5/hour", wait, passed)
		}
		spent = spent || wait >= 690
	}
	if !spent {
		t.Fatalf("Retry-After %v with %d calls passed on a bucket of 5 at 5/hour: none waits for a refill", waits, passed)
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
	// a's second call passes on a's spend ($0.00375, read before b's call):
	// the stated overshoot, one call. b refuses on its own ($0.0075); a on
	// the spend it read again at its second call ($0.0075 before it, $0.01125
	// with it), or, if that read has not answered yet, on its own $0.0075.
	ms.Script(reply, reply, reply)
	secret, _, _ = mint(t, a, map[string]any{"keys": []string{"LIM_AGENT"}, "budget_usd_day": 0.005})
	expect(t, tokenCall(t, a, secret, "LIM_AGENT", "hi"), 200, map[string]any{"ok": true})
	expect(t, tokenCall(t, b, secret, "LIM_AGENT", "hi"), 200, map[string]any{"ok": true})
	expect(t, tokenCall(t, a, secret, "LIM_AGENT", "hi"), 200, map[string]any{"ok": true})
	refused(t, b, tokenCall(t, b, secret, "LIM_AGENT", "hi"), 429, "budget_exhausted:0.0075>=0.005")
	got := tokenCall(t, a, secret, "LIM_AGENT", "hi")
	if reason, _ := got.JSON["error"].(string); reason == "budget_exhausted:0.0075>=0.005" {
		refused(t, a, got, 429, reason)
	} else {
		refused(t, a, got, 429, "budget_exhausted:0.01125>=0.005")
	}
}
