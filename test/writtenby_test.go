package test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"testing"
)

// Each version of a row names who wrote it, on the embedded host: the owner
// key as x-terminal-key and as a bearer token are two writers, a signed-in
// person a third (named by their id, which GET /api/people resolves), an
// import its caller, and the deletion its deleter. A written_by in a body is
// never stored, and who wrote a row is not part of its contract.
func TestWrittenByNamesEachVersion(t *testing.T) {
	tg := startEmbedded(t, nil)
	h := tg.host
	bearer := map[string]string{"Authorization": "Bearer " + h.Key}
	row := map[string]any{"key": "WB_ROW", "type": "http", "target": "GET https://api.example.test/v1/items?q=$1",
		"content": "# WHAT: a row several people write", "category": "wb", "written_by": "person:per_forged"}
	contract := func() string {
		t.Helper()
		got := h.do(t, req{Method: "GET", Path: "/api/dispatch?key=WB_ROW&format=json"})
		expect(t, got, 200, nil)
		return got.JSON["contract_sha256"].(string)
	}

	expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: row}), 201, nil)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/WB_ROW"}), 200, map[string]any{"version": 1, "written_by": "owner:terminal-key"})
	first := contract()

	// The same row again, through the bearer header: a new version, a new
	// writer, the same contract.
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/directory/WB_ROW", Body: row, NoAuth: true, Header: bearer}), 200, map[string]any{"version": 2})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/WB_ROW"}), 200, map[string]any{"version": 2, "written_by": "owner:bearer"})
	if c := contract(); c != first {
		t.Fatalf("a version that differs only in its writer changed the contract: %s != %s", c, first)
	}

	// A signed-in person (an editor, from their session cookie) edits it.
	person, cookie := signedIn(t, tg, "editor")
	asPerson := req{NoAuth: true, Header: map[string]string{"Cookie": "rowcall_session=" + cookie, "Origin": h.URL}}
	patch := asPerson
	patch.Method, patch.Path, patch.Body = "PATCH", "/api/directory/WB_ROW", map[string]any{"planner_rank": 7}
	expect(t, h.do(t, patch), 200, map[string]any{"version": 3})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/WB_ROW"}), 200, map[string]any{"written_by": "person:" + person})
	page := h.do(t, req{Method: "GET", Path: "/api/directory?category=wb"})
	if rows, _ := page.JSON["rows"].([]any); len(rows) != 1 || rows[0].(map[string]any)["written_by"] != "person:"+person {
		t.Fatalf("the list does not name the writer: %s", page.Raw)
	}
	people := h.do(t, req{Method: "GET", Path: "/api/people"})
	listed, _ := people.JSON["people"].([]any)
	if !slices.ContainsFunc(listed, func(p any) bool { return p.(map[string]any)["id"] == person }) {
		t.Fatalf("GET /api/people does not list %s: %s", person, people.Raw)
	}
	// A PATCH cannot name a writer: written_by is no field it writes.
	patch.Body = map[string]any{"planner_rank": 8, "written_by": "owner:terminal-key"}
	expect(t, h.do(t, patch), 400, map[string]any{"error": "unknown_fields"})

	// An import writes as its caller.
	row["category"] = "wb2"
	expect(t, h.do(t, req{Method: "POST", Path: "/api/import", Body: map[string]any{"rows": []any{row}}}), 200, map[string]any{"ok": true})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/WB_ROW"}), 200, map[string]any{"version": 4, "written_by": "owner:terminal-key"})

	// The person deletes it: the deletion's event names them.
	del := asPerson
	del.Method, del.Path = "DELETE", "/api/directory/WB_ROW"
	expect(t, h.do(t, del), 200, map[string]any{"deleted": 1})
	want := []string{"insert owner:terminal-key", "update owner:bearer", "update person:" + person, "update owner:terminal-key", "delete person:" + person}
	if got := writers(t, h, "WB_ROW"); !slices.Equal(got, want) {
		t.Fatalf("history names %q, want %q", got, want)
	}
}

// signedIn makes a person with role and a live session for them, as a
// sign-in through the provider would leave them (the database is the
// host's), and returns their id and the session cookie's value.
func signedIn(t *testing.T, tg *target, role string) (id, cookie string) {
	t.Helper()
	id, cookie = "per_"+rand.Text()[:12], rand.Text()
	sum := sha256.Sum256([]byte(cookie))
	db := tg.DB(t)
	if _, err := db.Exec(`INSERT INTO people (id, issuer, subject, name, role, created_at) VALUES (?, 'https://idp.example.test', ?, 'Ada', ?, '2026-01-01T00:00:00.000Z')`,
		id, id, role); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO sessions (id, person_id, created_at, expires_at, idle_until) VALUES (?, ?, '2026-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z')`,
		hex.EncodeToString(sum[:]), id); err != nil {
		t.Fatal(err)
	}
	return id, cookie
}

// writers is each event of key's history as "action written_by": the
// written_by of the snapshot the event left (an insert's or update's after,
// a delete's before).
func writers(t testing.TB, h *host, key string) []string {
	t.Helper()
	got := h.do(t, req{Method: "GET", Path: "/api/directory/" + key + "/history"})
	expect(t, got, 200, nil)
	var history struct {
		Events []struct {
			Action        string
			Before, After map[string]any
		}
	}
	if err := json.Unmarshal(got.Raw, &history); err != nil {
		t.Fatalf("history: %v: %s", err, got.Raw)
	}
	var out []string
	for _, e := range history.Events {
		snap := e.After
		if e.Action == "delete" {
			snap = e.Before
		}
		by, ok := snap["written_by"].(string)
		if !ok {
			t.Fatalf("a %s event without written_by: %s", e.Action, got.Raw)
		}
		out = append(out, e.Action+" "+by)
	}
	return out
}
