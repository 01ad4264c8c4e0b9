package test

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

var allowLoopback = []string{"--allow-outbound", "127.0.0.1/32"}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func dispatchCall(t *testing.T, h *host, key, body string) resp {
	t.Helper()
	return h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": key, "body": body}})
}

func proof(t *testing.T, r resp) map[string]any {
	t.Helper()
	p, ok := r.JSON["proof"].(map[string]any)
	if !ok {
		t.Fatalf("no proof: %s", r.Raw)
	}
	return p
}

// The seed's five steps: create ZZ_TEST_TEMPERATURE, invoke it, confirm its
// receipt, delete the row, and the receipt still confirms.
func TestSeedWalkthrough(t *testing.T) {
	up := newUpstream(t, openMeteo)
	h := startHost(t, allowLoopback)

	// Step 2: the POST.
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: temperatureRow(up.URL)}), 201, map[string]any{"ok": true})

	// Step 3: invoke it, no restart in between.
	got := dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "37.77|-122.42")
	expect(t, got, 200, map[string]any{"ok": true, "ran": true})
	for _, k := range []string{"ok", "ran", "trace", "result", "proof"} {
		if _, ok := got.JSON[k]; !ok {
			t.Fatalf("answer lacks %q: %s", k, got.Raw)
		}
	}
	result := got.JSON["result"].(string)
	if !strings.HasPrefix(result, `HTTP 200:{"current":{"interval":900,"temperature_2m":15.7,"time":"2026-07-26T04:30"}`) &&
		!strings.HasPrefix(result, "HTTP 200:{") {
		t.Fatalf("result %q", result)
	}
	if !strings.Contains(result, `"latitude":37.77`) || !strings.Contains(result, `"temperature_2m":15.7`) {
		t.Fatalf("result %q", result)
	}
	seen := up.requests()
	if len(seen) != 1 || seen[0].Query != "latitude=37.77&longitude=-122.42&current=temperature_2m" {
		t.Fatalf("upstream saw %+v", seen)
	}
	trace := got.JSON["trace"].(string)
	if !regexp.MustCompile(`^t_[0-9a-z]{14}$`).MatchString(trace) {
		t.Fatalf("trace %q", trace)
	}
	p := proof(t, got)
	id := p["invocation_id"].(string)
	if p["ok"] != true || !regexp.MustCompile(`^inv_[0-9a-z]{16}$`).MatchString(id) || p["public_receipt"] != h.URL+"/receipt/"+id {
		t.Fatalf("proof %v", p)
	}

	// Step 4: the receipt, public and keyless.
	confirm := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id, NoAuth: true})
	expect(t, confirm, 200, map[string]any{"confirmed": true, "status": "PROVEN_MATERIAL_RESULT"})
	rc := confirm.JSON["receipt"].(map[string]any)
	want := map[string]any{"actor": "owner:terminal-key", "runner": "http", "trace": trace, "material": true, "cost_usd": 0.0,
		"key": "ZZ_TEST_TEMPERATURE", "input_sha256": sha("37.77|-122.42"), "output_sha256": sha(result), "ok": true}
	for k, v := range want {
		if rc[k] != v {
			t.Fatalf("receipt %s = %v, want %v (%v)", k, rc[k], v, rc)
		}
	}
	if c, _ := rc["contract_sha256"].(string); len(c) != 64 {
		t.Fatalf("contract fingerprint %q", c)
	}
	page := h.do(t, req{Method: "GET", Path: "/receipt/" + id, NoAuth: true})
	if page.Status != 200 || !strings.Contains(string(page.Raw), id) || !strings.Contains(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("receipt page %d %s", page.Status, page.Raw)
	}

	// Step 5: remove it; the GET is 404, the receipt still confirms.
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/ZZ_TEST_TEMPERATURE"}), 200, map[string]any{"deleted": 1})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/ZZ_TEST_TEMPERATURE"}), 404, nil)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id, NoAuth: true}), 200,
		map[string]any{"confirmed": true, "status": "PROVEN_MATERIAL_RESULT"})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=inv_nosuchthing", NoAuth: true}), 404,
		map[string]any{"confirmed": false})
	// Dispatch needs the owner key (tokens come later).
	expect(t, h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "X"}, NoAuth: true}), 401, map[string]any{"error": "unauthorized"})
}

func createRow(t *testing.T, h *host, row map[string]any) {
	t.Helper()
	if _, ok := row["content"]; !ok {
		row["content"] = "# WHAT: test row " + row["key"].(string)
	}
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), 201, nil)
}

// The seed's failure table, for the http and flow runners: each literal string.
func TestFailureTable(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/denied":
			w.WriteHeader(401)
			fmt.Fprint(w, `{"error":"invalid api key"}`)
		default:
			openMeteo(w, r)
		}
	})
	h := startHost(t, allowLoopback)
	createRow(t, h, temperatureRow(up.URL))

	t.Run("unknown key", func(t *testing.T) {
		got := dispatchCall(t, h, "ZZ_TEST_TEMPERATUR", "37.77|-122.42")
		expect(t, got, 404, map[string]any{"error": "unknown_key", "attempted": "ZZ_TEST_TEMPERATUR", "ran": false,
			"did_you_mean": []string{"ZZ_TEST_TEMPERATURE"}})
	})
	t.Run("missing argument renders an empty slot", func(t *testing.T) {
		n := len(up.requests())
		dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "37.77")
		if q := up.requests()[n].Query; !strings.Contains(q, "&longitude=&") {
			t.Fatalf("query %q", q)
		}
	})
	t.Run("extra arguments are discarded", func(t *testing.T) {
		n := len(up.requests())
		expect(t, dispatchCall(t, h, "ZZ_TEST_TEMPERATURE", "1|2|3|4"), 200, map[string]any{"ok": true})
		if q := up.requests()[n].Query; q != "latitude=1&longitude=2&current=temperature_2m" {
			t.Fatalf("query %q", q)
		}
	})
	t.Run("unknown auth prefix", func(t *testing.T) {
		createRow(t, h, map[string]any{"key": "BAD_AUTH", "type": "http", "target": "GET " + up.URL + "/v1/forecast", "auth": "apikey:X"})
		expect(t, dispatchCall(t, h, "BAD_AUTH", ""), 200, map[string]any{"ok": false, "result": "ERR:http:BAD_AUTH:ERR:auth:unknown_prefix:apikey"})
	})
	t.Run("upstream refuses", func(t *testing.T) {
		createRow(t, h, map[string]any{"key": "DENIED", "type": "http", "target": "GET " + up.URL + "/denied", "auth": "bearer:TEST_DEAD_KEY"})
		expect(t, dispatchCall(t, h, "DENIED", ""), 200, map[string]any{"ok": false, "ran": true, "result": `ERR:http:401:{"error":"invalid api key"}`})
	})
	t.Run("target host unreachable", func(t *testing.T) {
		createRow(t, h, map[string]any{"key": "UNREACHABLE", "type": "http", "target": "GET http://127.0.0.1:1/nothing"})
		got := dispatchCall(t, h, "UNREACHABLE", "")
		if r := got.JSON["result"].(string); !strings.HasPrefix(r, "ERR:http:fetch:") {
			t.Fatalf("result %q", r)
		}
	})
	t.Run("flow step without a colon", func(t *testing.T) {
		createRow(t, h, map[string]any{"key": "BAD_FLOW", "type": "flow", "content": "# WHAT: broken\nZZ_TEST_TEMPERATURE: 1|2\n> JUST_A_KEY"})
		expect(t, dispatchCall(t, h, "BAD_FLOW", ""), 200, map[string]any{"ok": false, "result": "ERR:flow:bad_step:JUST_A_KEY"})
	})
	t.Run("disabled row", func(t *testing.T) {
		createRow(t, h, map[string]any{"key": "OFF", "type": "http", "target": "GET " + up.URL + "/v1/forecast", "enabled": 0})
		expect(t, dispatchCall(t, h, "OFF", ""), 409, map[string]any{"error": "row_disabled", "ran": false})
	})
	t.Run("bad dispatch request", func(t *testing.T) {
		expect(t, h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"body": "x"}}), 400, map[string]any{"error": "invalid_request"})
		expect(t, h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "ZZ_TEST_TEMPERATURE", "body": []int{1}}}), 400, map[string]any{"error": "invalid_request"})
	})
}

// Eight consecutive 401s open the breaker; it survives a restart, stops calls
// reaching the upstream, and the owner can clear it.
func TestCircuitBreaker(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401); fmt.Fprint(w, "no") })
	h := startHost(t, allowLoopback)
	createRow(t, h, map[string]any{"key": "DEAD_CRED", "type": "http", "target": "GET " + up.URL + "/x", "auth": "bearer:DEAD_CRED_KEY"})
	for i := range 8 {
		expect(t, dispatchCall(t, h, "DEAD_CRED", ""), 200, map[string]any{"result": "ERR:http:401:no"})
		_ = i
	}
	open := "ERR:breaker_open:DEAD_CRED — 8 consecutive auth failures; credential is dead until replaced."
	if got := dispatchCall(t, h, "DEAD_CRED", ""); got.JSON["result"] != open {
		var failures int
		var opened sql.NullString
		err := h.db(t).QueryRow(`SELECT failures, opened_at FROM breakers WHERE key = 'DEAD_CRED'`).Scan(&failures, &opened)
		t.Fatalf("the call after 8 auth failures: %s, want %q; breakers table: failures=%d opened_at=%v (%v); host log:\n%s",
			got.Raw, open, failures, opened, err, h.out.String())
	}
	if n := len(up.requests()); n != 8 {
		t.Fatalf("upstream saw %d calls, want 8", n)
	}
	// State is in the database: a restarted host still refuses.
	h.stop()
	h2 := startHostIn(t, h.Data, allowLoopback)
	expect(t, dispatchCall(t, h2, "DEAD_CRED", ""), 200, map[string]any{"result": open})
	// Shape mode has no breaker effect and still previews.
	got := h2.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "DEAD_CRED", "shape": true}})
	expect(t, got, 200, map[string]any{"ran": false})
	// The owner clears it.
	expect(t, h2.do(t, req{Method: "DELETE", Path: "/api/breakers/DEAD_CRED", NoAuth: true}), 401, nil)
	expect(t, h2.do(t, req{Method: "DELETE", Path: "/api/breakers/DEAD_CRED"}), 200, map[string]any{"cleared": true})
	expect(t, dispatchCall(t, h2, "DEAD_CRED", ""), 200, map[string]any{"result": "ERR:http:401:no"})
	if n := len(up.requests()); n != 9 {
		t.Fatalf("upstream saw %d calls, want 9", n)
	}
}

// The dispatcher caches rows, but an edit is live on the next call: at once
// when made through the API, within a millisecond when made by another
// process straight in the database (both move the event log).
func TestEditsAreLiveOnTheNextCall(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.URL.Path) })
	h := startHost(t, allowLoopback)
	createRow(t, h, map[string]any{"key": "WHERE", "type": "http", "target": "GET " + up.URL + "/one"})
	for range 3 { // warm the cache
		expect(t, dispatchCall(t, h, "WHERE", ""), 200, map[string]any{"result": "HTTP 200:/one"})
	}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/WHERE", Body: map[string]any{"target": "GET " + up.URL + "/two"}}), 200, nil)
	expect(t, dispatchCall(t, h, "WHERE", ""), 200, map[string]any{"result": "HTTP 200:/two"})
	if _, err := h.db(t).Exec(`UPDATE directory SET target = ?, version = version + 1 WHERE key = 'WHERE'`, "GET "+up.URL+"/three"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	expect(t, dispatchCall(t, h, "WHERE", ""), 200, map[string]any{"result": "HTTP 200:/three"})
	// A new row is live at once, too.
	createRow(t, h, map[string]any{"key": "WHERE_NEW", "type": "http", "target": "GET " + up.URL + "/new"})
	expect(t, dispatchCall(t, h, "WHERE_NEW", ""), 200, map[string]any{"result": "HTTP 200:/new"})
}
