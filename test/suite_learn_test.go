package test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// suiteLearn: ask learns from use (internal/learn). A teaching token's
// question, followed by a successful call of one of its matches, becomes
// that row's learned phrase, and the next ask put that way finds the row
// first. A token without teach, a failed call, and a question asked under
// one scope leave no trace in another scope's ranking; the phrase is listed
// for the owner with its receipt, and is not part of the row's contract.
func suiteLearn(t *testing.T, tg *target, up *upstream) {
	skipWithoutMeaning(t)
	if tg.Name == "worker" {
		tg = startWorkerStandins(t, nil) // Workers AI and Vectorize's stand-ins, as suiteMeaning
	}
	h := tg.host
	const cat = "learn_suite"
	for _, r := range []map[string]any{
		{"key": "L_SMS", "content": "# WHAT: Send an SMS text message to a phone number through Twilio.\n# WHEN_TO_USE: someone must be notified on their phone."},
		{"key": "L_REFUND", "content": "# WHAT: Refund a card charge in full or in part through Stripe.\n# WHEN_TO_USE: a customer was billed by mistake or sent the goods back."},
		{"key": "L_TIDES", "content": "# WHAT: Tide times and heights for a harbour this week.\n# WHEN_TO_USE: going sailing or fishing."},
	} {
		r["type"], r["target"], r["category"] = "http", "GET "+up.URL+"/"+r["key"].(string), cat
		createRow(t, h, r)
		waitSimilar(t, h, r["key"].(string))
	}
	createRow(t, h, map[string]any{"key": "L_FAILS", "type": "http", "target": "GET " + up.URL + "/fail", "category": cat,
		"content": "# WHAT: Send an SMS text message to a phone number, through a gateway that is down.\n# WHEN_TO_USE: never: it fails."})
	waitSimilar(t, h, "L_FAILS")
	if tg.Name == "worker" {
		synced(t, h, tg)
	}

	q := ""
	ask := func(secret string) resp {
		t.Helper()
		got := asToken(t, h, secret, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape(q) + "&limit=5"})
		expect(t, got, http.StatusOK, nil)
		return got
	}
	call := func(secret, key string) resp {
		t.Helper()
		return asToken(t, h, secret, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": key, "body": "x"}})
	}
	learned := func() []any {
		t.Helper()
		got := h.do(t, req{Method: "GET", Path: "/api/learned"})
		expect(t, got, http.StatusOK, nil)
		all, _ := got.JSON["phrases"].([]any)
		var ps []any // this suite's: the host's other suites ask and call as the owner, who teaches
		for _, p := range all {
			if key, _ := p.(map[string]any)["key"].(string); strings.HasPrefix(key, "L_") {
				ps = append(ps, p)
			}
		}
		return ps
	}
	plain, _, _ := mint(t, h, map[string]any{"categories": []string{cat}})
	teacher, teacherID, _ := mint(t, h, map[string]any{"categories": []string{cat}, "teach": true})
	other, _, _ := mint(t, h, map[string]any{"keys": []string{"L_SMS", "L_REFUND", "L_TIDES", "L_FAILS"}, "teach": true})

	// A question whose second match is a row that answers: the one taught.
	var before resp
	target := ""
	for _, q = range []string{"tell the customer on their phone that the charge is returned", "text the customer about the refund"} {
		before = asToken(t, h, plain, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape(q) + "&limit=5"})
		if keys := matchKeys(before); len(keys) > 1 && keys[1] != "L_FAILS" {
			target = keys[1]
			break
		}
	}
	if target == "" || !slices.Contains(matchKeys(before), "L_FAILS") {
		t.Fatalf("no question finds two answering rows and L_FAILS: %s", before.Raw)
	}
	otherBefore := ask(other)

	// A token without teach: its ask and successful call teach nothing.
	ask(plain)
	got := call(plain, target)
	expect(t, got, http.StatusOK, map[string]any{"ok": true})
	contract := got.JSON["proof"].(map[string]any)["contract_sha256"]
	// A teaching token's failed call teaches nothing.
	ask(teacher)
	if got := call(teacher, "L_FAILS"); got.JSON["ok"] == true {
		t.Fatalf("L_FAILS should fail: %s", got.Raw)
	}
	if ps := learned(); len(ps) != 0 {
		t.Fatalf("learned from a token without teach, or from a failed call: %v", ps)
	}
	if after := ask(plain); string(after.Raw) != string(before.Raw) {
		t.Fatalf("the ranking moved without a lesson:\nbefore %s\nafter  %s", before.Raw, after.Raw)
	}

	// The teaching token asks, then calls a match: the next ask finds it first.
	ask(teacher)
	got = call(teacher, target)
	expect(t, got, http.StatusOK, map[string]any{"ok": true})
	receipt := got.JSON["proof"].(map[string]any)["invocation_id"]
	ps := learned()
	if len(ps) != 1 {
		t.Fatalf("one lesson, not %d: %v", len(ps), ps)
	}
	p := ps[0].(map[string]any)
	if p["key"] != target || p["phrase"] != q || p["source"] != "use" || p["actor"] != "token:"+teacherID || p["receipt"] != receipt {
		t.Fatalf("the lesson: %v (receipt %v)", p, receipt)
	}
	if keys := matchKeys(ask(teacher)); len(keys) == 0 || keys[0] != target {
		t.Fatalf("the taught row is not found first: %v", keys)
	}
	// Another scope's ranking is as it was, and so is the row's contract.
	if after := ask(other); string(after.Raw) != string(otherBefore.Raw) {
		t.Fatalf("a lesson under one scope moved another's ranking:\nbefore %s\nafter  %s", otherBefore.Raw, after.Raw)
	}
	if c := call(plain, target).JSON["proof"].(map[string]any)["contract_sha256"]; c != contract || c == nil {
		t.Fatalf("the contract changed with a lesson: %v → %v", contract, c)
	}

	// The owner approves, rewrites and deletes it; only the owner sees them.
	id := p["id"].(string)
	expect(t, asToken(t, h, teacher, req{Method: "GET", Path: "/api/learned"}), http.StatusForbidden, nil)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/learned/" + id, Body: map[string]any{"approved": true}}), http.StatusOK, map[string]any{"ok": true})
	if p := learned()[0].(map[string]any); p["approved"] != true {
		t.Fatalf("not approved: %v", p)
	}
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/learned/" + id}), http.StatusOK, map[string]any{"ok": true})
	if keys := matchKeys(ask(teacher)); len(keys) == 0 || keys[0] == target {
		t.Fatalf("a deleted phrase still ranks: %v", keys)
	}
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/learned/" + id}), http.StatusNotFound, map[string]any{"error": "not_found"})
}
