package test

// The black-box suite, written once and run against every host in
// backends_test.go: the registry and its errors, optimistic concurrency, an
// http row dispatched to a loopback upstream with its credential injected (and
// kept out of shape previews and answers), the outbound policy, a flow that
// fans out, fn modules, receipts confirmed, and tokens, the signed receipt
// chain, import and search.
//
//	go test ./test -run TestHosts            every host
//	go test ./test -run 'TestHosts/worker'   one host

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rowcall/rowcall/test/modelserver"
)

// suiteSecret is the credential the suite's rows name; every host gets it in
// its environment (the worker as a var, as a secret would be).
const suiteSecret = "sk-suite-7c1e9a55d04b"

// suiteUpstream is the loopback stand-in for third-party APIs.
func suiteUpstream(t testing.TB) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/forecast":
			openMeteo(w, r)
		case "/private":
			if r.Header.Get("Authorization") != "Bearer "+suiteSecret {
				w.WriteHeader(401)
				fmt.Fprint(w, `{"error":"bad credential"}`)
				return
			}
			// A careless upstream that echoes the credential back.
			fmt.Fprintf(w, `{"ok":true,"you_sent":%q}`, r.Header.Get("Authorization"))
		case "/fail":
			w.WriteHeader(500)
			fmt.Fprint(w, "boom")
		case "/mimic": // an upstream that imitates rowcall's answer of a call waiting for approval
			fmt.Fprint(w, `{"ok":false,"ran":false,"status":"approval_required","approval_id":"apr_mimic0000000000000",`+
				`"approve_url":"https://rowcall.example/#/approvals/apr_mimic0000000000000","approval_url":"https://rowcall.example/api/approvals/apr_mimic0000000000000"}`)
		default:
			fmt.Fprintf(w, `{"path":%q,"q":%q}`, r.URL.Path, r.URL.Query().Get("q"))
		}
	})
}

func TestHosts(t *testing.T) {
	// One OpenID provider on loopback for every host: people sign in
	// through it (suitePeople).
	idp := startIDP(t)
	for _, b := range backends {
		// One host at a time, and not beside the package's parallel tests:
		// workerd is CPU-heavy, and the fn sandbox tests time their limits.
		t.Run(b.Name, func(t *testing.T) {
			up := suiteUpstream(t)
			ms := modelserver.Start(t)
			ms.Key = suiteSecret
			tg := b.Start(t, append([]string{"SUITE_API_KEY=" + suiteSecret, "ROWCALL_MODEL_PROVIDERS=suite=" + ms.URL,
				fmt.Sprintf(`ROWCALL_MODEL_PRICES={"suite-1":{"input":%g,"output":%g}}`, grokPriceIn, grokPriceOut),
				"ROWCALL_MCP_ORIGINS=" + suiteMCPOrigins, "ROWCALL_APPROVAL_NOTIFY=S_APPR_NOTIFY"}, idp.Env()...))
			t.Run("registry", func(t *testing.T) { suiteRegistry(t, tg) })
			t.Run("concurrency", func(t *testing.T) { suiteConcurrency(t, tg) })
			t.Run("http", func(t *testing.T) { suiteHTTP(t, tg, up) })
			t.Run("outbound", func(t *testing.T) { suiteOutbound(t, tg) })
			t.Run("flow", func(t *testing.T) { suiteFlow(t, tg, up) })
			t.Run("fn", func(t *testing.T) { suiteFnModules(t, tg) })
			t.Run("fn_costly", func(t *testing.T) { suiteFnCostlyModules(t, tg) })
			t.Run("live", func(t *testing.T) { suiteLiveEdit(t, tg) })
			t.Run("agent", func(t *testing.T) { suiteAgent(t, tg, ms) })
			t.Run("trust", func(t *testing.T) { suiteTrust(t, tg, up) })
			t.Run("reserved", func(t *testing.T) { suiteReserved(t, tg, up) })
			t.Run("includes", func(t *testing.T) { suiteIncludes(t, tg, ms) })
			t.Run("openapi", func(t *testing.T) { suiteOpenAPI(t, tg, up) })
			t.Run("mcp", func(t *testing.T) { suiteMCP(t, tg) })
			t.Run("mcp_import", func(t *testing.T) { suiteMCPImport(t, tg) })
			t.Run("mcp_drift", func(t *testing.T) { suiteMCPDrift(t, tg) })
			t.Run("mcp_output", func(t *testing.T) { suiteMCPOutput(t, tg, up) })
			t.Run("mcp_unlisted", func(t *testing.T) { suiteMCPUnlisted(t, tg, up) })
			t.Run("limits", func(t *testing.T) { suiteLimits(t, tg, up, ms) })
			t.Run("meaning", func(t *testing.T) { suiteMeaning(t, tg) })
			t.Run("learn", func(t *testing.T) { suiteLearn(t, tg, up) })
			t.Run("bounds", func(t *testing.T) { suiteBounds(t, tg, up) })
			t.Run("mcp_origin", func(t *testing.T) { suiteMCPOrigin(t, tg) })
			t.Run("cors", func(t *testing.T) { suiteCORS(t, tg) })
			t.Run("oauth", func(t *testing.T) { suiteOAuth(t, tg) })
			t.Run("approvals", func(t *testing.T) { suiteApprovals(t, tg, up) })
			t.Run("people", func(t *testing.T) { suitePeople(t, tg, up, idp) })
		})
	}
}

// suiteRegistry: create, read, list, patch, replace, delete, history, and the
// refusals with their stable codes.
func suiteRegistry(t *testing.T, tg *target) {
	h := tg.host
	row := map[string]any{"key": "S_REG", "type": "http", "target": "GET https://api.example.test/v1/items?q=$1",
		"content": "# WHAT: suite registry row", "category": "suite_reg", "examples": `["a"]`, "written_by": "person:per_forged"}
	got := h.do(t, req{Method: "POST", Path: "/api/directory", Body: row})
	expect(t, got, 201, map[string]any{"ok": true, "key": "S_REG"})
	if got.Header.Get("ETag") != `"1"` {
		t.Fatalf("ETag %q", got.Header.Get("ETag"))
	}
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), 409, map[string]any{"error": "key_exists", "state_changed": false})
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "bad key!", "type": "http", "content": "# WHAT: x"}}), 400, map[string]any{"state_changed": false})
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "S_FIFTH", "type": "lambda", "content": "# WHAT: x"}}), 400, map[string]any{"state_changed": false})
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "S_UNDOC", "type": "http"}}), 422,
		map[string]any{"error": "registry_hygiene_refused: missing_description"})
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: `{"key":"S_BAD",`}), 400, map[string]any{"error": "malformed_json"})
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: row, Header: map[string]string{"Content-Type": "text/plain"}}), 415, nil)
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: row, NoAuth: true}), 401, map[string]any{"error": "unauthorized"})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_REG", NoAuth: true}), 401, map[string]any{"error": "unauthorized"})

	got = h.do(t, req{Method: "GET", Path: "/api/directory/S_REG"})
	expect(t, got, 200, map[string]any{"key": "S_REG", "type": "http", "version": 1, "category": "suite_reg", "examples": `["a"]`,
		"planner_rank": 100, "enabled": 1, "seq": nil})
	if _, ok := got.JSON["row_num"].(float64); !ok {
		t.Fatalf("no row_num: %s", got.Raw)
	}
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "S_REG2", "type": "flow",
		"content": "# WHAT: second", "category": "suite_reg", "seq": 1}}), 201, nil)
	got = h.do(t, req{Method: "GET", Path: "/api/directory?category=suite_reg"})
	expect(t, got, 200, map[string]any{"total": 2})
	if rows := got.JSON["rows"].([]any); len(rows) != 2 || rows[0].(map[string]any)["key"] != "S_REG2" {
		t.Fatalf("list order (pinned seq first): %s", got.Raw)
	}
	got = h.do(t, req{Method: "GET", Path: "/api/directory?category=suite_reg&limit=1&offset=1"})
	expect(t, got, 200, map[string]any{"total": 2})
	if rows := got.JSON["rows"].([]any); len(rows) != 1 || rows[0].(map[string]any)["key"] != "S_REG" {
		t.Fatalf("second page: %s", got.Raw)
	}

	// Each version names who wrote it: the owner key through x-terminal-key
	// and through a bearer token are two writers, and a body's written_by is
	// never stored.
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_REG"}), 200, map[string]any{"written_by": "owner:terminal-key"})
	bearer := map[string]string{"Authorization": "Bearer " + h.Key}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/S_REG", Body: map[string]any{"planner_rank": 7}, NoAuth: true, Header: bearer}),
		200, map[string]any{"ok": true, "version": 2})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_REG"}), 200, map[string]any{"written_by": "owner:bearer"})
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/S_REG", Body: map[string]any{"written_by": "person:per_forged"}}), 400,
		map[string]any{"error": "no recognized fields"})
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/S_REG", Body: map[string]any{"colour": "blue"}}), 400, map[string]any{"error": "no recognized fields"})
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/S_REG", Body: map[string]any{"content": ""}}), 422,
		map[string]any{"error": "registry_hygiene_refused: missing_description"})
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/directory/S_REG", Body: map[string]any{"type": "http", "target": "GET https://api.example.test/v2",
		"content": "# WHAT: replaced", "written_by": "person:per_forged"}}), 200, map[string]any{"version": 3})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_REG"}), 200, map[string]any{"planner_rank": 100, "category": "", "content": "# WHAT: replaced",
		"written_by": "owner:terminal-key"})
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/S_REG", NoAuth: true, Header: bearer}), 200, map[string]any{"deleted": 1})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_REG"}), 404, map[string]any{"error": "not_found"})
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/S_REG"}), 404, map[string]any{"state_changed": false})

	// The event log (written by triggers, in the same statement as the write).
	got = h.do(t, req{Method: "GET", Path: "/api/directory/S_REG/history"})
	expect(t, got, 200, nil)
	var events []map[string]any
	if err := json.Unmarshal(got.Raw, &events); err != nil {
		var wrapped struct{ Events []map[string]any }
		if json.Unmarshal(got.Raw, &wrapped) != nil {
			t.Fatalf("history %s", got.Raw)
		}
		events = wrapped.Events
	}
	var actions []string
	for _, e := range events {
		actions = append(actions, fmt.Sprint(e["action"]))
	}
	if strings.Join(actions, ",") != "insert,update,update,delete" {
		t.Fatalf("history actions %v: %s", actions, got.Raw)
	}
	// Each event's snapshot names who made it, the deletion's too.
	want := []string{"insert owner:terminal-key", "update owner:bearer", "update owner:terminal-key", "delete owner:bearer"}
	if got := writers(t, h, "S_REG"); !slices.Equal(got, want) {
		t.Fatalf("history names %q, want %q", got, want)
	}
}

// suiteConcurrency: If-Match guards a write; of five concurrent writers that
// read the same version exactly one wins; without If-Match no update is lost.
func suiteConcurrency(t *testing.T, tg *target) {
	h := tg.host
	createRow(t, h, map[string]any{"key": "S_OCC", "type": "http", "target": "GET https://api.example.test/", "category": "occ"})
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/S_OCC", Body: map[string]any{"planner_rank": 2},
		Header: map[string]string{"If-Match": `"9"`}}), 412, map[string]any{"error": "version_conflict", "current_version": 1})
	got := h.do(t, req{Method: "PATCH", Path: "/api/directory/S_OCC", Body: map[string]any{"planner_rank": 2},
		Header: map[string]string{"If-Match": `"1"`}})
	expect(t, got, 200, map[string]any{"version": 2})

	const writers = 5
	statuses := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = h.do(t, req{Method: "PATCH", Path: "/api/directory/S_OCC", Body: map[string]any{"planner_rank": 10 + i},
				Header: map[string]string{"If-Match": `"2"`}}).Status
		}()
	}
	wg.Wait()
	won := 0
	for _, s := range statuses {
		switch s {
		case 200:
			won++
		case 412:
		default:
			t.Fatalf("concurrent If-Match writes answered %v", statuses)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent writers at version 2 won (%v), want exactly 1", won, writers, statuses)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_OCC"}), 200, map[string]any{"version": 3})

	// Without If-Match, concurrent PATCHes of different fields all land.
	fields := []map[string]any{{"category": "occ2"}, {"runner": "r2"}, {"planner_rank": 77}, {"examples": `["z"]`}}
	for _, f := range fields {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s := h.do(t, req{Method: "PATCH", Path: "/api/directory/S_OCC", Body: f}).Status; s != 200 {
				t.Errorf("PATCH %v: %d", f, s)
			}
		}()
	}
	wg.Wait()
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/S_OCC"}), 200,
		map[string]any{"version": 3 + len(fields), "category": "occ2", "runner": "r2", "planner_rank": 77, "examples": `["z"]`})
}

// suiteHTTP: an http row with a bearer credential from the host's
// environment, dispatched to a loopback upstream; the credential reaches the
// upstream and nothing else; shape mode sends nothing and shows no credential;
// receipts confirm.
func suiteHTTP(t *testing.T, tg *target, up *upstream) {
	h := tg.host
	createRow(t, h, map[string]any{"key": "S_PRIVATE", "type": "http", "target": "GET " + up.URL + "/private?q=$1", "auth": "bearer:SUITE_API_KEY"})
	n := len(up.requests())
	// A client's X-Forwarded-Proto does not move the receipt link (docs/operating.md, "Settings").
	got := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "S_PRIVATE", "body": "hello world"},
		Header: map[string]string{"X-Forwarded-Proto": "https"}})
	expect(t, got, 200, map[string]any{"ok": true, "ran": true})
	if p := proof(t, got); p["public_receipt"] != h.URL+"/receipt/"+p["invocation_id"].(string) {
		t.Fatalf("public_receipt %v, want it under %s", p["public_receipt"], h.URL)
	}
	if strings.Contains(string(got.Raw), suiteSecret) {
		t.Fatalf("the credential is in the answer: %s", got.Raw)
	}
	if r := got.JSON["result"].(string); !strings.HasPrefix(r, `HTTP 200:{"ok":true,"you_sent":"Bearer `) {
		t.Fatalf("result %q", r)
	}
	seen := up.requests()[n:]
	if len(seen) != 1 || seen[0].Header.Get("Authorization") != "Bearer "+suiteSecret || seen[0].Query != "q=hello+world" {
		t.Fatalf("upstream saw %+v", seen)
	}
	id := proof(t, got)["invocation_id"].(string)
	confirm := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id, NoAuth: true})
	expect(t, confirm, 200, map[string]any{"confirmed": true, "status": "PROVEN_MATERIAL_RESULT"})
	rc := confirm.JSON["receipt"].(map[string]any)
	for k, v := range map[string]any{"key": "S_PRIVATE", "runner": "http", "ok": true, "material": true,
		"input_sha256": sha("hello world"), "output_sha256": sha(got.JSON["result"].(string))} {
		if rc[k] != v {
			t.Fatalf("receipt %s = %v, want %v (%v)", k, rc[k], v, rc)
		}
	}
	if strings.Contains(string(confirm.Raw), suiteSecret) {
		t.Fatalf("credential in the receipt: %s", confirm.Raw)
	}
	page := h.do(t, req{Method: "GET", Path: "/receipt/" + id, NoAuth: true})
	if page.Status != 200 || !strings.Contains(string(page.Raw), id) {
		t.Fatalf("receipt page %d %s", page.Status, page.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=inv_nosuchthing", NoAuth: true}), 404, map[string]any{"confirmed": false})

	// Shape mode: the plan, no credential, nothing sent, recorded as not material.
	n = len(up.requests())
	got = h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "S_PRIVATE", "body": "q1", "shape": true}})
	expect(t, got, 200, map[string]any{"ran": false})
	if strings.Contains(string(got.Raw), suiteSecret) {
		t.Fatalf("the credential is in the shape answer: %s", got.Raw)
	}
	plan, _ := got.JSON["shape"].(map[string]any)
	if plan["method"] != "GET" || plan["url"] != up.URL+"/private?q=q1" {
		t.Fatalf("plan %v", got.JSON["shape"])
	}
	if hd, _ := json.Marshal(plan["headers"]); strings.Contains(strings.ToLower(string(hd)), "authorization") {
		t.Fatalf("authorization in the preview: %s", hd)
	}
	if len(up.requests()) != n {
		t.Fatal("shape mode sent a request")
	}
	id = proof(t, got)["invocation_id"].(string)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id}), 200, map[string]any{"status": "RECORDED_NOT_MATERIAL"})

	// An upstream refusal is a result, with a receipt that says it failed.
	createRow(t, h, map[string]any{"key": "S_NOAUTH", "type": "http", "target": "GET " + up.URL + "/private", "auth": "bearer:NOT_SET_ANYWHERE"})
	got = dispatchCall(t, h, "S_NOAUTH", "")
	expect(t, got, 200, map[string]any{"ok": false, "ran": true, "result": `ERR:http:401:{"error":"bad credential"}`})
	id = proof(t, got)["invocation_id"].(string)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id}), 200, map[string]any{"status": "PROVEN_MATERIAL_FAILURE"})

	// Unknown keys suggest what exists.
	expect(t, dispatchCall(t, h, "S_PRIVAT", ""), 404, map[string]any{"error": "unknown_key", "ran": false, "did_you_mean": []string{"S_PRIVATE"}})
}

// suiteOutbound: loopback addresses other than the allowed 127.0.0.1, and the
// IANA special-purpose ranges in any IPv6 form, are refused before anything
// is sent.
func suiteOutbound(t *testing.T, tg *target) {
	h := tg.host
	for key, tt := range map[string]struct{ url, class string }{
		"S_LOOPBACK2": {"http://127.0.0.2:9/x", "loopback"},
		"S_TESTNET":   {"http://192.0.2.1:9/x", "special-purpose (192.0.2.0/24)"},
		"S_V4COMPAT":  {"http://[::127.0.0.1]:9/x", "loopback"},
		"S_SIX2FOUR":  {"http://[2002:c0a8:101::1]:9/x", "private"},
	} {
		createRow(t, h, map[string]any{"key": key, "type": "http", "target": "GET " + tt.url})
		got := dispatchCall(t, h, key, "")
		r, _ := got.JSON["result"].(string)
		if !strings.HasPrefix(r, "ERR:http:fetch:outbound:") || !strings.Contains(r, " is a "+tt.class+" address") {
			t.Errorf("%s answered %s, want a refusal as %s", tt.url, got.Raw, tt.class)
		}
	}
}

// suiteFlow: a flow chains rows, fans out two calls at once, and leaves one
// receipt per step under its trace.
func suiteFlow(t *testing.T, tg *target, up *upstream) {
	h := tg.host
	createRow(t, h, map[string]any{"key": "S_ECHO_A", "type": "http", "target": "GET " + up.URL + "/a?q=$1"})
	createRow(t, h, map[string]any{"key": "S_ECHO_B", "type": "http", "target": "GET " + up.URL + "/b?q=$1"})
	createRow(t, h, map[string]any{"key": "S_FAILS", "type": "http", "target": "GET " + up.URL + "/fail"})
	createRow(t, h, map[string]any{"key": "S_CHAIN", "type": "flow", "content": "# WHAT: chain\nS_ECHO_A: $1 => FIRST\n> { S_ECHO_B: $FIRST | S_ECHO_A: two }\n> S_ECHO_B: $PREV.S_ECHO_A"})
	createRow(t, h, map[string]any{"key": "S_STOPS", "type": "flow", "content": "# WHAT: stops\nS_ECHO_A: x\n> S_FAILS: y\n> S_ECHO_B: never"})

	n := len(up.requests())
	got := dispatchCall(t, h, "S_CHAIN", "one")
	expect(t, got, 200, map[string]any{"ok": true, "ran": true})
	if r := got.JSON["result"].(string); !strings.HasPrefix(r, `HTTP 200:{"path":"/b","q":"HTTP 200:{\"path\":\"/a\",\"q\":\"two\"}"}`) {
		t.Fatalf("result %q", r)
	}
	if calls := len(up.requests()) - n; calls != 4 {
		t.Fatalf("the flow made %d upstream calls, want 4", calls)
	}
	trace := got.JSON["trace"].(string)
	id := proof(t, got)["invocation_id"].(string)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id}), 200, map[string]any{"status": "PROVEN_MATERIAL_RESULT"})
	var steps, nested int
	if err := tg.DB(t).QueryRow(`SELECT COUNT(*), COUNT(parent) FROM receipts WHERE trace = ?`, trace).Scan(&steps, &nested); err != nil {
		t.Fatal(err)
	}
	if steps != 5 || nested != 4 {
		t.Fatalf("%d receipts (%d nested) under the flow's trace, want 5 and 4", steps, nested)
	}

	n = len(up.requests())
	expect(t, dispatchCall(t, h, "S_STOPS", ""), 200, map[string]any{"ok": false, "result": "ERR:http:500:boom"})
	if calls := len(up.requests()) - n; calls != 2 {
		t.Fatalf("the flow made %d calls, want it to stop after the failing step (2)", calls)
	}
}
