package test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/expand"
	"github.com/rowcall/rowcall/test/modelserver"
)

// A model writes the questions of each new or changed row
// (ROWCALL_ASK_EXPAND; package expand), through the stand-in model: they are
// kept as the row's learned phrases with the call's receipt, and the next
// ask put that way finds the row, under any token scope that holds it, after
// any row whose own text matches the question. A
// write that changes no text is not sent again; a changed text replaces the
// questions.
func TestAskExpand(t *testing.T) {
	skipWithoutMeaning(t)
	ms := modelserver.Start(t)
	ms.Key = suiteSecret
	// What the model writes, by the row's when_to_use: every text
	// a row has in this test has its own answer, so the questions seen are
	// those of the text written last.
	answers := map[string]string{
		"going sailing or fishing.": "where can I buy bait",
		"going sailing, fishing or diving.": "1. when can I take the boat out of the marina tomorrow\n" +
			"- \"is the water deep enough at the quay at noon\"\n\nwhen can I take the boat out of the marina tomorrow\n",
		"travelling by sea with a car.":      "can I bring my van on the boat to the island",
		"before a dive.":                     "what hour is the sea lowest at the jetty",
		"someone wants to take a kayak out.": "can I paddle around the bay this afternoon",
	}
	ms.Fallback(func(r modelserver.Request) modelserver.Reply {
		user := ""
		for _, m := range r.Chat.Messages {
			if m.Role == "user" {
				user = m.Text()
			}
		}
		if strings.Contains(user, `"when_to_use":"planning a picnic."`) {
			return modelserver.Reply{Status: http.StatusBadRequest} // a call that fails
		}
		for when, a := range answers {
			if strings.Contains(user, `"when_to_use":"`+when+`"`) {
				return modelserver.Reply{Content: a, Usage: spendUsage}
			}
		}
		return modelserver.Reply{Content: "how do I use this", Usage: spendUsage}
	})
	modelCalls := func(what string) int {
		n := 0
		for _, r := range ms.Requests() {
			if strings.Contains(string(r.Body), what) {
				n++
			}
		}
		return n
	}
	h := startHost(t, allowLoopback, spendEnv(ms, "ROWCALL_ASK_EXPAND=ASK_EXPAND")...)
	up := suiteUpstream(t)
	const cat = "expand_suite"
	rows := []map[string]any{
		{"key": "EX_WEATHER", "content": "# WHAT: Weather forecast for a town: wind, rain and temperature.\n# WHEN_TO_USE: planning a day outdoors."},
		{"key": "EX_BOAT_HIRE", "content": "# WHAT: Hire a boat or a kayak at the marina, by the hour.\n# WHEN_TO_USE: someone wants to take a boat out tomorrow."},
		{"key": "EX_FERRY", "content": "# WHAT: Ferry timetable between two ports.\n# WHEN_TO_USE: travelling by sea."},
		{"key": "EX_TIDES", "content": "# WHAT: Tide times and heights for a harbour this week.\n# WHEN_TO_USE: going sailing or fishing."},
	}
	// Written before the expansion row exists: their calls fail (logged), and
	// they have no questions.
	for _, r := range rows {
		r["type"], r["target"], r["category"] = "http", "GET "+up.URL+"/"+r["key"].(string), cat
		createRow(t, h, r)
		waitSimilar(t, h, r["key"].(string))
	}
	secret, _, _ := mint(t, h, map[string]any{"categories": []string{cat}})
	const q = "when can I take the boat out of the marina tomorrow"
	ask := func() []string {
		t.Helper()
		got := asToken(t, h, secret, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape(q) + "&limit=5"})
		expect(t, got, http.StatusOK, nil)
		return matchKeys(got)
	}
	if keys := ask(); len(keys) > 0 && keys[0] == "EX_TIDES" {
		t.Fatalf("the question finds EX_TIDES first without its questions: the test shows nothing (%v)", keys)
	}
	phrases := func(key string) []map[string]any {
		t.Helper()
		got := h.do(t, req{Method: "GET", Path: "/api/learned?key=" + key})
		expect(t, got, http.StatusOK, nil)
		var out []map[string]any
		for _, p := range got.JSON["phrases"].([]any) {
			out = append(out, p.(map[string]any))
		}
		return out
	}
	waitPhrases := func(key string, want ...string) []map[string]any {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			ps := phrases(key)
			var texts []string
			for _, p := range ps {
				texts = append(texts, p["phrase"].(string))
			}
			slices.Sort(texts)
			if slices.Equal(texts, want) {
				return ps
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s's phrases: %q, want %q", key, texts, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	createRow(t, h, map[string]any{"key": "ASK_EXPAND", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"category": "system", "content": "# WHAT: Writes the questions people would ask of a capability\n" + expand.Prompt})
	// A change of text: the model writes EX_TIDES's questions.
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/EX_TIDES", Body: map[string]any{
		"content": "# WHAT: Tide times and heights for a harbour this week.\n# WHEN_TO_USE: going sailing, fishing or diving."}}), http.StatusOK, nil)
	ps := waitPhrases("EX_TIDES", "is the water deep enough at the quay at noon", q)
	inv := ps[0]["receipt"].(string)
	for _, p := range ps {
		if p["source"] != "model" || p["actor"] != "model:ASK_EXPAND" || p["receipt"] != inv || p["scope"] != "*" {
			t.Fatalf("a question the model wrote: %v", p)
		}
	}
	var actor, key, outcome string
	if err := h.db(t).QueryRow(`SELECT actor, key, outcome FROM receipts WHERE id = ?`, inv).Scan(&actor, &key, &outcome); err != nil {
		t.Fatalf("the phrases' receipt %s: %v", inv, err)
	}
	if actor != expand.Actor || key != "ASK_EXPAND" || outcome != "ok" {
		t.Fatalf("the expansion's receipt: actor %q key %q outcome %q", actor, key, outcome)
	}
	// A token scoped to the category finds the row by the model's words,
	// right after EX_BOAT_HIRE, whose own text matches the question: a
	// model's question never puts its row above another row's own match.
	if keys := ask(); len(keys) < 2 || keys[0] != "EX_BOAT_HIRE" || keys[1] != "EX_TIDES" {
		t.Fatalf("the question the model wrote for EX_TIDES: %v, want EX_BOAT_HIRE (its own text) then EX_TIDES", keys)
	}
	// Once the owner approves it, the question ranks as a taught one: first.
	for _, p := range ps {
		if p["phrase"] == q {
			expect(t, h.do(t, req{Method: "PATCH", Path: "/api/learned/" + p["id"].(string), Body: map[string]any{"approved": true}}), http.StatusOK, nil)
		}
	}
	if keys := ask(); len(keys) == 0 || keys[0] != "EX_TIDES" {
		t.Fatalf("the question the model wrote, approved by the owner, does not find EX_TIDES first: %v", keys)
	}

	// A write that changes no text calls no model; a changed text replaces
	// the questions. Rows are expanded in the order of their writes, so
	// EX_FERRY's questions come after EX_TIDES's write is looked at.
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/EX_TIDES", Body: map[string]any{"planner_rank": 50}}), http.StatusOK, nil)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/EX_FERRY", Body: map[string]any{
		"content": "# WHAT: Ferry timetable between two ports.\n# WHEN_TO_USE: travelling by sea with a car."}}), http.StatusOK, nil)
	waitPhrases("EX_FERRY", "can I bring my van on the boat to the island")
	if n := modelCalls("going sailing, fishing or diving."); n != 1 {
		var bodies []string
		for _, r := range ms.Requests() {
			bodies = append(bodies, string(r.Body))
		}
		t.Fatalf("EX_TIDES's text was sent to the model %d times, want 1 (a write without a text change sends nothing):\n%s", n, strings.Join(bodies, "\n"))
	}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/EX_TIDES", Body: map[string]any{
		"content": "# WHAT: High and low water at a port, by the hour.\n# WHEN_TO_USE: before a dive."}}), http.StatusOK, nil)
	waitPhrases("EX_TIDES", "what hour is the sea lowest at the jetty", q) // the approved one stays

	// A failed call is not made again when the row's vector is written
	// after it: the expansion looks at a row once a write. EX_BOAT_HIRE's
	// write comes after EX_WEATHER's new vector, so once its questions are
	// in, every event of EX_WEATHER's has been looked at.
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/EX_WEATHER", Body: map[string]any{
		"content": "# WHAT: Weather forecast for a town: wind, rain and temperature.\n# WHEN_TO_USE: planning a picnic."}}), http.StatusOK, nil)
	db := h.db(t)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM events WHERE kind = 'VECTOR' AND key = 'EX_WEATHER' AND id >
			(SELECT max(id) FROM events WHERE kind = 'DIRECTORY_MUTATE' AND key = 'EX_WEATHER')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("EX_WEATHER's new text has no vector")
		}
	}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/EX_BOAT_HIRE", Body: map[string]any{
		"content": "# WHAT: Hire a boat or a kayak at the marina, by the hour.\n# WHEN_TO_USE: someone wants to take a kayak out."}}), http.StatusOK, nil)
	waitPhrases("EX_BOAT_HIRE", "can I paddle around the bay this afternoon")
	if n := modelCalls("planning a picnic."); n != 1 {
		t.Fatalf("EX_WEATHER's text, whose call failed, was sent to the model %d times, want 1", n)
	}
	if ps := phrases("EX_WEATHER"); len(ps) != 0 {
		t.Fatalf("EX_WEATHER has questions from a failed call: %v", ps)
	}
}

// The expansion's spend is capped a day (ROWCALL_ASK_EXPAND_DAILY_USD):
// once its calls, run as tok_ask_expand, have cost the cap, a row written
// after is not sent to the model, and the refusal is on the receipts.
func TestAskExpandDailyBudget(t *testing.T) {
	skipWithoutMeaning(t)
	ms := modelserver.Start(t)
	ms.Key = suiteSecret
	ms.Fallback(func(modelserver.Request) modelserver.Reply {
		return modelserver.Reply{Content: "how do I pay my supplier", Usage: spendUsage}
	})
	// One call costs more than the cap: the first passes (nothing spent yet), the next is refused.
	h := startHost(t, allowLoopback, spendEnv(ms, "ROWCALL_ASK_EXPAND=ASK_EXPAND", "ROWCALL_ASK_EXPAND_DAILY_USD=0.0000001")...)
	createRow(t, h, map[string]any{"key": "ASK_EXPAND", "type": "agent", "target": "suite-1", "auth": "bearer:SUITE_API_KEY",
		"category": "system", "content": "# WHAT: Writes the questions people would ask of a capability\n" + expand.Prompt})
	db := h.db(t)
	wait := func(what, query string) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			var n int
			if err := db.QueryRow(query).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s", what)
			}
		}
	}
	createRow(t, h, map[string]any{"key": "BUDGET_PAY", "type": "http", "target": "GET https://api.example.test/pay",
		"content": "# WHAT: Pay a supplier's invoice."})
	wait("questions for BUDGET_PAY", `SELECT count(*) FROM learned WHERE key = 'BUDGET_PAY' AND source = 'model'`)
	createRow(t, h, map[string]any{"key": "BUDGET_REFUND", "type": "http", "target": "GET https://api.example.test/refund",
		"content": "# WHAT: Refund a card charge."})
	wait("refused expansion", `SELECT count(*) FROM receipts WHERE key = 'ASK_EXPAND' AND token_id = '`+expand.TokenID+`' AND outcome LIKE 'refused:budget_exhausted%'`)
	if n := len(ms.Requests()); n != 1 {
		t.Fatalf("the model was sent %d requests, want 1 (the cap was spent by the first)", n)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM learned WHERE key = 'BUDGET_REFUND'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("BUDGET_REFUND has %d questions past the cap (%v)", n, err)
	}
}

// A host whose ROWCALL_ASK_EXPAND names a row that offers tools does not
// start: it says so, with the code.
func TestAskExpandRowWithToolsRefusedAtStart(t *testing.T) {
	h := startHost(t, nil)
	createRow(t, h, map[string]any{"key": "ASK_EXPAND", "type": "agent", "target": "suite-1", "allowed_categories": "*",
		"category": "system", "content": "# WHAT: Writes the questions people would ask of a capability\n" + expand.Prompt})
	h.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a host that starts is stopped
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--addr", "127.0.0.1:0", "--data", h.Data, "--no-examples")
	cmd.Env = append(os.Environ(), "ROWCALL_OWNER_KEY=", "ROWCALL_EMBED_PROVIDER=off", "ROWCALL_ASK_EXPAND=ASK_EXPAND")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), string(rowcall.EExpandTools)) || !strings.Contains(string(out), "allowed_categories") {
		t.Fatalf("the host started, or did not say why not (%v):\n%s", err, out)
	}
}
