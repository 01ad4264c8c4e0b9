package test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestCreateReadPatchDelete(t *testing.T) {
	h := startHost(t, nil)
	row := temperatureRow("https://api.open-meteo.com")

	got := h.do(t, req{Method: "POST", Path: "/api/directory", Body: row})
	expect(t, got, 201, map[string]any{"ok": true, "key": "ZZ_TEST_TEMPERATURE"})
	if !strings.HasPrefix(string(got.Raw), `{"ok":true,"key":"ZZ_TEST_TEMPERATURE","updated_at":"`) {
		t.Fatalf("POST body %s, want the seed's shape", got.Raw)
	}
	if got.Header.Get("ETag") != `"1"` {
		t.Fatalf("ETag %q", got.Header.Get("ETag"))
	}
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), 409, map[string]any{"error": "key_exists", "state_changed": false})

	got = h.do(t, req{Method: "GET", Path: "/api/directory/ZZ_TEST_TEMPERATURE"})
	expect(t, got, 200, map[string]any{"key": "ZZ_TEST_TEMPERATURE", "type": "http", "version": 1, "row_num": 1,
		"examples": `["37.77|-122.42"]`, "planner_rank": 100, "sensitive": 0, "seq": nil, "category": "tools"})
	for _, col := range []string{"key", "type", "target", "auth", "content", "updated_at", "category", "allowed_categories", "seq",
		"enabled", "planner_visible", "planner_rank", "input_schema", "examples", "sensitive", "runner", "includes", "created_at", "version", "row_num"} {
		if _, ok := got.JSON[col]; !ok {
			t.Errorf("GET lacks column %s", col)
		}
	}
	if got.Header.Get("ETag") != `"1"` {
		t.Fatalf("ETag %q", got.Header.Get("ETag"))
	}

	// PATCH writes runner and sensitive (unlike the seed), and bumps the version.
	got = h.do(t, req{Method: "PATCH", Path: "/api/directory/ZZ_TEST_TEMPERATURE", Body: map[string]any{"runner": "edge"}})
	expect(t, got, 200, map[string]any{"ok": true, "version": 2})
	got = h.do(t, req{Method: "PATCH", Path: "/api/directory/ZZ_TEST_TEMPERATURE",
		Body: map[string]any{"sensitive": 1, "input_schema": map[string]any{"type": "object"}}})
	expect(t, got, 200, map[string]any{"version": 3})
	got = h.do(t, req{Method: "GET", Path: "/api/directory/ZZ_TEST_TEMPERATURE"})
	expect(t, got, 200, map[string]any{"runner": "edge", "sensitive": 1, "input_schema": `{"type":"object"}`, "version": 3})

	// PUT replaces the whole row: fields it does not send return to defaults.
	got = h.do(t, req{Method: "PUT", Path: "/api/directory/ZZ_TEST_TEMPERATURE",
		Body: map[string]any{"type": "http", "target": "GET http://example.test/", "content": "# WHAT: replaced"}})
	expect(t, got, 200, map[string]any{"version": 4})
	got = h.do(t, req{Method: "GET", Path: "/api/directory/ZZ_TEST_TEMPERATURE"})
	expect(t, got, 200, map[string]any{"runner": "", "sensitive": 0, "category": "", "examples": "", "content": "# WHAT: replaced"})

	got = h.do(t, req{Method: "DELETE", Path: "/api/directory/ZZ_TEST_TEMPERATURE"})
	expect(t, got, 200, nil)
	if string(got.Raw) != `{"ok":true,"key":"ZZ_TEST_TEMPERATURE","deleted":1}`+"\n" {
		t.Fatalf("DELETE body %s", got.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/ZZ_TEST_TEMPERATURE"}), 404, map[string]any{"error": "not_found"})
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/ZZ_TEST_TEMPERATURE"}), 404, map[string]any{"error": "not_found", "state_changed": false})
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/directory/ZZ_TEST_TEMPERATURE", Body: map[string]any{"type": "http", "content": "# WHAT: x"}}), 404, nil)
}

func TestListFiltersAndPages(t *testing.T) {
	h := startHost(t, nil)
	for i, spec := range []struct{ key, typ, cat string }{
		{"A_ONE", "http", "tools"}, {"B_TWO", "fn", "time"}, {"C_THREE", "http", "tools"}, {"D_FOUR", "flow", "tools"}, {"E_FIVE", "agent", "chat"},
	} {
		body := map[string]any{"key": spec.key, "type": spec.typ, "category": spec.cat, "content": "# WHAT: row " + spec.key}
		if i == 4 {
			body["enabled"] = 0
		}
		expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: body}), 201, nil)
	}
	keys := func(r resp) string {
		var k []string
		for _, row := range r.JSON["rows"].([]any) {
			k = append(k, row.(map[string]any)["key"].(string))
		}
		return strings.Join(k, ",")
	}
	for _, c := range []struct {
		query, keys string
		total       int
	}{
		{"", "A_ONE,B_TWO,C_THREE,D_FOUR,E_FIVE", 5},
		{"?type=http", "A_ONE,C_THREE", 2},
		{"?category=tools", "A_ONE,C_THREE,D_FOUR", 3},
		{"?category=tools&type=flow", "D_FOUR", 1},
		{"?enabled=0", "E_FIVE", 1},
		{"?enabled=1&limit=2", "A_ONE,B_TWO", 4},
		{"?limit=2&offset=2", "C_THREE,D_FOUR", 5},
		{"?limit=2&offset=4", "E_FIVE", 5},
	} {
		got := h.do(t, req{Method: "GET", Path: "/api/directory" + c.query})
		expect(t, got, 200, map[string]any{"total": c.total})
		if keys(got) != c.keys {
			t.Errorf("%s: keys %s, want %s", c.query, keys(got), c.keys)
		}
	}
	got := h.do(t, req{Method: "GET", Path: "/api/directory?limit=2"})
	expect(t, got, 200, map[string]any{"next_offset": 2})
	got = h.do(t, req{Method: "GET", Path: "/api/directory?limit=2&offset=4"})
	expect(t, got, 200, map[string]any{"next_offset": nil})
	// row_num is the row's place in the whole directory, whatever the filter.
	got = h.do(t, req{Method: "GET", Path: "/api/directory?type=flow"})
	if n := got.JSON["rows"].([]any)[0].(map[string]any)["row_num"]; n != 4.0 {
		t.Fatalf("row_num %v, want 4", n)
	}
	for _, q := range []string{"?type=lambda", "?enabled=yes", "?limit=0", "?limit=5000", "?offset=-1"} {
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory" + q}), 400, map[string]any{"error": "invalid_request"})
	}
}

func TestOwnerAuthentication(t *testing.T) {
	h := startHost(t, nil)
	row := map[string]any{"key": "AUTHED", "type": "http", "content": "# WHAT: x"}
	for _, r := range []req{
		{Method: "POST", Path: "/api/directory", Body: row},
		{Method: "GET", Path: "/api/directory"},
		{Method: "GET", Path: "/api/directory/AUTHED"},
		{Method: "PUT", Path: "/api/directory/AUTHED", Body: row},
		{Method: "PATCH", Path: "/api/directory/AUTHED", Body: map[string]any{"category": "x"}},
		{Method: "DELETE", Path: "/api/directory/AUTHED"},
		{Method: "GET", Path: "/api/directory/AUTHED/history"},
	} {
		for _, hdr := range []map[string]string{nil, {"x-terminal-key": "wrong"}, {"Authorization": "Bearer wrong"}} {
			r.NoAuth, r.Header = true, hdr
			got := h.do(t, r)
			if got.Status != 401 || got.JSON["error"] != "unauthorized" || got.JSON["how_to_fix"] == nil {
				t.Fatalf("%s %s with %v: %d %s", r.Method, r.Path, hdr, got.Status, got.Raw)
			}
		}
	}
	// Authorization: Bearer works as well as x-terminal-key.
	got := h.do(t, req{Method: "POST", Path: "/api/directory", Body: row, NoAuth: true, Header: map[string]string{"Authorization": "Bearer " + h.Key}})
	expect(t, got, 201, nil)
	if n := countRows(t, h); n != 1 {
		t.Fatalf("%d rows", n)
	}

	// With public reads, reads need no credential; writes still do.
	p := startHost(t, []string{"--public-reads"})
	expect(t, p.do(t, req{Method: "GET", Path: "/api/directory", NoAuth: true}), 200, nil)
	expect(t, p.do(t, req{Method: "POST", Path: "/api/directory", Body: row, NoAuth: true}), 401, map[string]any{"error": "unauthorized"})
}

func countRows(t *testing.T, h *host) int {
	var n int
	if err := h.db(t).QueryRow(`SELECT COUNT(*) FROM directory`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBadInputChangesNothing(t *testing.T) {
	h := startHost(t, nil)
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "KEEP", "type": "http", "content": "# WHAT: kept"}}), 201, nil)
	huge := strings.Repeat("x", 2_000_001)
	for _, c := range []struct {
		name   string
		r      req
		status int
		fields map[string]any
		inMsg  string
	}{
		{"malformed JSON says where", req{Method: "POST", Path: "/api/directory", Body: "{\"key\":\"A\",\n  \"type\": }"}, 400,
			map[string]any{"error": "malformed_json", "line": 2, "column": 11}, "line 2, column 11"},
		{"truncated JSON", req{Method: "POST", Path: "/api/directory", Body: `{"key":"A"`}, 400, map[string]any{"error": "malformed_json"}, "ends before"},
		{"not an object", req{Method: "POST", Path: "/api/directory", Body: `["key"]`}, 400, map[string]any{"error": "malformed_json"}, "JSON object"},
		{"empty body", req{Method: "POST", Path: "/api/directory", Body: ""}, 400, map[string]any{"error": "malformed_json"}, "empty"},
		{"trailing data", req{Method: "POST", Path: "/api/directory", Body: `{"key":"A","type":"fn"} {}`}, 400, map[string]any{"error": "malformed_json"}, "after the JSON object"},
		{"type outside the four", req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "A", "type": "lambda", "content": "# WHAT: x"}}, 400,
			map[string]any{"error": "invalid_request", "field": "type"}, "one of fn, http, agent, flow"},
		{"key missing", req{Method: "POST", Path: "/api/directory", Body: map[string]any{"type": "fn"}}, 400, map[string]any{"field": "key"}, "key is required"},
		{"type missing", req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "A"}}, 400, map[string]any{"field": "type"}, "type is required"},
		{"invalid key", req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "bad key/../x", "type": "fn", "content": "# WHAT: x"}}, 400,
			map[string]any{"field": "key"}, "breaks the key rule"},
		{"invalid key in path", req{Method: "PATCH", Path: "/api/directory/-x", Body: map[string]any{"category": "a"}}, 400, map[string]any{"field": "key"}, "key rule"},
		{"wrong content type", req{Method: "POST", Path: "/api/directory", Body: `{"key":"A","type":"fn"}`, Header: map[string]string{"Content-Type": "text/plain"}}, 415,
			map[string]any{"error": "unsupported_media_type"}, "Content-Type"},
		{"value over 2,000,000 bytes", req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "A", "type": "fn", "content": huge}}, 413,
			map[string]any{"error": "too_large", "field": "content"}, "2000000"},
		{"body over the cap", req{Method: "POST", Path: "/api/directory", Body: `{"key":"A","type":"fn","content":"` + strings.Repeat("y", 5<<20) + `"}`}, 413,
			map[string]any{"error": "too_large"}, "request body"},
		{"bad flag", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"enabled": "yes"}}, 400, map[string]any{"field": "enabled"}, "0 or 1"},
		{"bad integer", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"planner_rank": "high"}}, 400, map[string]any{"field": "planner_rank"}, "integer"},
		{"string expected", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"target": 5}}, 400, map[string]any{"field": "target"}, "string"},
		{"schema not an object", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"input_schema": "[1]"}}, 400, map[string]any{"field": "input_schema"}, "JSON Schema object"},
		{"schema not JSON", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"input_schema": "{nope"}}, 400, map[string]any{"field": "input_schema"}, "not valid JSON"},
		{"examples not strings", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"examples": "[1,2]"}}, 400, map[string]any{"field": "examples"}, "array of argument strings"},
		{"no recognized fields", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"runnr": "edge"}}, 400,
			map[string]any{"error": "no recognized fields", "unknown_fields": []string{"runnr"}}, "runnr"},
		{"read-only fields are not patchable", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"version": 9}}, 400,
			map[string]any{"error": "no recognized fields", "unknown_fields": []string{"version"}}, "version"},
		{"unknown field beside known ones", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"category": "x", "colour": "red"}}, 400,
			map[string]any{"error": "unknown_fields", "unknown_fields": []string{"colour"}}, "colour"},
		{"unknown field in PUT", req{Method: "PUT", Path: "/api/directory/KEEP", Body: map[string]any{"type": "http", "content": "# WHAT: y", "colour": "red"}}, 400,
			map[string]any{"error": "unknown_fields"}, "colour"},
		{"PUT changing the key", req{Method: "PUT", Path: "/api/directory/KEEP", Body: map[string]any{"key": "OTHER", "type": "http", "content": "# WHAT: y"}}, 400,
			map[string]any{"field": "key"}, "differs"},
		{"PUT without type", req{Method: "PUT", Path: "/api/directory/KEEP", Body: map[string]any{"content": "# WHAT: y"}}, 400, map[string]any{"field": "type"}, "type is required"},
		{"bad If-Match", req{Method: "PATCH", Path: "/api/directory/KEEP", Body: map[string]any{"category": "x"}, Header: map[string]string{"If-Match": "abc"}}, 400,
			map[string]any{"error": "invalid_request"}, "If-Match"},
		{"unknown route", req{Method: "GET", Path: "/api/nothing"}, 404, map[string]any{"error": "not_found"}, "not part of the API"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := h.do(t, c.r)
			expect(t, got, c.status, c.fields)
			if !strings.Contains(fmt.Sprint(got.JSON["message"]), c.inMsg) {
				t.Fatalf("message %q does not say %q", got.JSON["message"], c.inMsg)
			}
			if c.r.Method != "GET" && got.JSON["state_changed"] != false {
				t.Fatalf("refusal lacks state_changed:false: %s", got.Raw)
			}
		})
	}
	if n := countRows(t, h); n != 1 {
		t.Fatalf("%d rows after refused writes, want 1", n)
	}
	got := h.do(t, req{Method: "GET", Path: "/api/directory/KEEP"})
	expect(t, got, 200, map[string]any{"version": 1, "category": "", "content": "# WHAT: kept"})
}

// TestValueSizeIsStoredBytes: the 2,000,000-byte rule measures what is stored
// (the decoded string), not its JSON spelling: 1.1 MB of quotes, 2.2 MB as
// JSON, is taken; 2,000,001 plain bytes are refused with the same message.
func TestValueSizeIsStoredBytes(t *testing.T) {
	h := startHost(t, nil)
	quotes := "# WHAT: quotes\n" + strings.Repeat(`"`, 1_100_000)
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "QUOTES", "type": "http", "content": quotes}}), 201, nil)
	if got := h.do(t, req{Method: "GET", Path: "/api/directory/QUOTES"}); got.JSON["content"] != quotes {
		t.Fatalf("content read back is %d bytes, want %d", len(fmt.Sprint(got.JSON["content"])), len(quotes))
	}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/QUOTES", Body: map[string]any{"target": strings.Repeat(`"`, 1_100_000)}}), 413,
		map[string]any{"error": "too_large", "message": "the row is over 2000000 bytes, the largest value or row the directory stores (D1's limit)"}) // the field fits; the row does not
	got := h.do(t, req{Method: "PATCH", Path: "/api/directory/QUOTES", Body: map[string]any{"target": strings.Repeat("x", 2_000_001)}})
	expect(t, got, 413, map[string]any{"error": "too_large", "field": "target", "state_changed": false,
		"message": "target is over 2000000 bytes, the largest value or row the directory stores (D1's limit)"})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/QUOTES"}), 200, map[string]any{"version": 1, "target": ""})
}

func TestHygieneGate(t *testing.T) {
	h := startHost(t, nil)
	missingDescription := map[string]any{"error": "registry_hygiene_refused: missing_description", "state_changed": false}
	highRisk := map[string]any{"error": "registry_hygiene_refused: high_risk_missing_schema", "state_changed": false}

	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "NODOC", "type": "http"}}), 422, missingDescription)
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "RISKY", "type": "http", "content": "# WHAT: x", "sensitive": 1}}), 422, highRisk)
	got := h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "NODOC", "type": "http", "content": "  \n "}})
	expect(t, got, 422, missingDescription)
	if !strings.Contains(got.JSON["how_to_fix"].(string), "content") {
		t.Fatalf("how_to_fix %q", got.JSON["how_to_fix"])
	}
	if n := countRows(t, h); n != 0 {
		t.Fatalf("%d rows after refusals", n)
	}

	// A compliant row: PUT and PATCH that would break it are refused.
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "GOOD", "type": "http", "content": "# WHAT: good"}}), 201, nil)
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/directory/GOOD", Body: map[string]any{"type": "http"}}), 422, missingDescription)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/GOOD", Body: map[string]any{"content": ""}}), 422, missingDescription)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/GOOD", Body: map[string]any{"sensitive": 1}}), 422, highRisk)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/GOOD", Body: map[string]any{"sensitive": 1, "input_schema": `{"type":"object"}`}}), 200, nil)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/GOOD", Body: map[string]any{"input_schema": nil}}), 422, highRisk)

	// A row that predates the rule stays editable for unrelated maintenance, but
	// PUT still refuses it as it is.
	if _, err := h.db(t).Exec(`INSERT INTO directory (key, type, content, updated_at) VALUES ('LEGACY', 'http', '', '2026-01-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/LEGACY", Body: map[string]any{"category": "old"}}), 200, map[string]any{"version": 2})
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/directory/LEGACY", Body: map[string]any{"type": "http", "category": "old"}}), 422, missingDescription)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/LEGACY", Body: map[string]any{"sensitive": 1}}), 422, highRisk)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/LEGACY", Body: map[string]any{"content": "# WHAT: now documented"}}), 200, map[string]any{"version": 3})
}

func TestOptimisticConcurrency(t *testing.T) {
	h := startHost(t, nil)
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "RACE", "type": "http", "content": "# WHAT: race"}}), 201, nil)

	// 20 concurrent PATCHes that all read version 1: exactly one wins.
	const n = 20
	var wg sync.WaitGroup
	results := make([]resp, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = h.do(t, req{Method: "PATCH", Path: "/api/directory/RACE", Header: map[string]string{"If-Match": `"1"`},
				Body: map[string]any{"category": fmt.Sprintf("writer-%d", i)}})
		}()
	}
	wg.Wait()
	var ok, conflict int
	var winner string
	for i, r := range results {
		switch r.Status {
		case 200:
			ok++
			winner = fmt.Sprintf("writer-%d", i)
		case 412:
			conflict++
			if r.JSON["error"] != "version_conflict" || r.JSON["current_version"] != 2.0 || r.Header.Get("ETag") != `"2"` {
				t.Fatalf("412 body %s etag %s", r.Raw, r.Header.Get("ETag"))
			}
		default:
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
	}
	if ok != 1 || conflict != n-1 {
		t.Fatalf("%d successes and %d conflicts, want 1 and %d", ok, conflict, n-1)
	}
	got := h.do(t, req{Method: "GET", Path: "/api/directory/RACE"})
	expect(t, got, 200, map[string]any{"version": 2, "category": winner})

	// Without If-Match, concurrent PATCHes of different fields all land: no lost update.
	fields := []string{"target", "auth", "category", "allowed_categories", "runner", "includes", "examples", "planner_rank"}
	for i, f := range fields {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := any(fmt.Sprintf("v%d", i))
			switch f {
			case "examples":
				v = `["x"]`
			case "planner_rank":
				v = 7
			}
			results[i] = h.do(t, req{Method: "PATCH", Path: "/api/directory/RACE", Body: map[string]any{f: v}})
		}()
	}
	wg.Wait()
	for i := range fields {
		if results[i].Status != 200 {
			t.Fatalf("PATCH %s: %d %s", fields[i], results[i].Status, results[i].Raw)
		}
	}
	got = h.do(t, req{Method: "GET", Path: "/api/directory/RACE"})
	expect(t, got, 200, map[string]any{"version": 2 + len(fields), "target": "v0", "auth": "v1", "category": "v2",
		"allowed_categories": "v3", "runner": "v4", "includes": "v5", "examples": `["x"]`, "planner_rank": 7})

	// A stale If-Match on DELETE and PUT is refused too.
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/RACE", Header: map[string]string{"If-Match": `"1"`}}), 412, map[string]any{"current_version": 2 + len(fields)})
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/directory/RACE", Header: map[string]string{"If-Match": `"1"`},
		Body: map[string]any{"type": "http", "content": "# WHAT: y"}}), 412, nil)
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/RACE", Header: map[string]string{"If-Match": fmt.Sprintf(`"%d"`, 2+len(fields))}}), 200, nil)
}

func TestEventLogAndHistory(t *testing.T) {
	h := startHost(t, nil)
	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "LOGGED", "type": "http", "content": "# WHAT: one", "target": "GET http://a/"}}), 201, nil)
	expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/LOGGED", Body: map[string]any{"target": "GET http://b/"}}), 200, nil)
	row := h.do(t, req{Method: "GET", Path: "/api/directory/LOGGED"}).JSON
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/directory/LOGGED"}), 200, nil)

	got := h.do(t, req{Method: "GET", Path: "/api/directory/LOGGED/history"})
	expect(t, got, 200, map[string]any{"key": "LOGGED"})
	events := got.JSON["events"].([]any)
	if len(events) != 3 {
		t.Fatalf("%d events: %s", len(events), got.Raw)
	}
	want := []struct {
		action        string
		version       float64
		before, after string // target before and after, "" for none
	}{
		{"insert", 1, "", "GET http://a/"},
		{"update", 2, "GET http://a/", "GET http://b/"},
		{"delete", 2, "GET http://b/", ""},
	}
	target := func(v any) string {
		if m, ok := v.(map[string]any); ok {
			return m["target"].(string)
		}
		return ""
	}
	for i, w := range want {
		e := events[i].(map[string]any)
		if e["kind"] != "DIRECTORY_MUTATE" || e["action"] != w.action || e["version"] != w.version ||
			target(e["before"]) != w.before || target(e["after"]) != w.after {
			t.Fatalf("event %d = %v, want %+v", i, e, w)
		}
	}
	// A version in the history reads as GET read it: "auth":"" in both, not
	// "" in one and null in the other.
	after := events[1].(map[string]any)["after"].(map[string]any)
	for k, v := range after {
		if fmt.Sprint(row[k]) != fmt.Sprint(v) || (row[k] == nil) != (v == nil) {
			t.Errorf("history %s = %#v, GET showed %#v", k, v, row[k])
		}
	}

	// The log is append-only, even to someone with the database file.
	db := h.db(t)
	for _, stmt := range []string{`UPDATE events SET action = 'forged'`, `DELETE FROM events`} {
		if _, err := db.Exec(stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// A write made straight to the table is logged by the same trigger.
	if _, err := db.Exec(`INSERT INTO directory (key, type, content, updated_at) VALUES ('DIRECT', 'fn', '# WHAT: d', '2026-01-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	var n int
	db.QueryRow(`SELECT COUNT(*) FROM events WHERE key = 'DIRECT' AND action = 'insert'`).Scan(&n)
	if n != 1 {
		t.Fatalf("%d events for a direct insert", n)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/NEVER/history"}), 404, nil)
	_ = http.StatusOK
}
