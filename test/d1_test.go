package test

// D1 on the worker, in workerd (`wrangler dev --local`): what each hot path
// costs in rows read, as D1 itself counts them (its meta.rows_read, which the
// worker sums per request into x-rowcall-rows-read), and the Sessions API's
// bookmark round trip (x-d1-bookmark). docs/d1.md records the figures.
//
//	go test ./test -run 'TestD1' -v -timeout 20m

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/rowgen"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// d1Line is one request's D1 account in GET /_worker/stats.
type d1Line struct {
	Request     string `json:"request"`
	Session     string `json:"session"`
	Statements  int64  `json:"statements"`
	RowsRead    int64  `json:"rows_read"`
	RowsWritten int64  `json:"rows_written"`
	Each        []struct {
		SQL      string `json:"sql"`
		RowsRead int64  `json:"rows_read"`
		Written  int64  `json:"rows_written"`
	} `json:"each"`
}

// lastD1 returns the D1 account of the last request before this call.
func lastD1(t *testing.T, h *host) d1Line {
	t.Helper()
	s := stats(t, h)
	if len(s.D1.Recent) == 0 {
		t.Fatalf("no request in the stats: %+v", s)
	}
	return s.D1.Recent[len(s.D1.Recent)-1]
}

func rowsRead(t *testing.T, r resp) int64 {
	t.Helper()
	n, err := strconv.ParseInt(r.Header.Get("X-Rowcall-Rows-Read"), 10, 64)
	if err != nil {
		t.Fatalf("x-rowcall-rows-read %q: %v", r.Header.Get("X-Rowcall-Rows-Read"), err)
	}
	return n
}

// On a 10,000-row directory, each hot path reads rows in proportion to what
// it returns, not to the table: dispatch, a contract document, a list page
// of 50, ask, and confirm.
func TestD1RowsRead(t *testing.T) {
	tg := startWorker(t, nil)
	h := tg.host
	noise := rowgen.Noise(10_000, 7)
	importRows(t, h, noise)
	keys := make([]string, len(noise))
	for i, r := range noise {
		keys[i] = r.Key
	}
	slices.Sort(keys)
	key5001 := keys[5000]
	askMatches := int64(0) // rows with a word of the ask below
	for _, r := range noise {
		if c := strings.ToLower(r.Content); strings.Contains(c, "export") || strings.Contains(c, "invoice") || strings.Contains(c, "team") {
			askMatches++
		}
	}
	t.Logf("%d of %d rows match a word of the ask", askMatches, len(noise))

	echo, _ := wasmexamples.ByName("echo")
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/modules/w_echo", Body: echo.Wasm,
		Header: map[string]string{"Content-Type": "application/wasm"}}), 200, nil)
	createRow(t, h, map[string]any{"key": "W_ECHO", "type": "fn", "target": "w_echo", "content": "# WHAT: echo\n[\"$1\",\"$2\"]"})

	var inv string
	paths := []struct {
		name  string
		req   func() req
		limit int64 // rows read at most
	}{
		// The first call after a write looks at the row; the next one runs on
		// the dispatcher's cache (its receipt's INSERT checks the event log).
		{"dispatch (after a write)", func() req {
			return req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "W_ECHO", "body": "a|b"}}
		}, 8},
		{"dispatch (warm)", func() req {
			return req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "W_ECHO", "body": "c|d"}}
		}, 4},
		{"contract document", func() req { return req{Method: "GET", Path: "/api/dispatch?key=W_ECHO&format=json"} }, 4},
		{"list page of 50", func() req { return req{Method: "GET", Path: "/api/directory?limit=50"} }, 50 + 2},
		// ask ranks every row that matches one of its words (bm25 reads each
		// match's length) and joins its best 250 candidates to the directory:
		// it reads in proportion to the matches, not to the table.
		{"ask", func() req {
			return req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape("export the invoices for a team") + "&limit=5"}
		}, 2*askMatches + 2*250 + 100},
		{"confirm", func() req { return req{Method: "GET", Path: "/api/dispatch?confirm=" + inv, NoAuth: true} }, 2},
		// Not hot paths: recorded in docs/d1.md, not bounded here.
		{"list page of 50 at offset 5000", func() req { return req{Method: "GET", Path: "/api/directory?limit=50&offset=5000"} }, -1},
		{"list page of 50 by type", func() req { return req{Method: "GET", Path: "/api/directory?limit=50&type=fn"} }, -1},
		{"one row (GET /api/directory/{key}), 5,001st", func() req { return req{Method: "GET", Path: "/api/directory/" + key5001} }, -1},
	}
	for _, p := range paths {
		got := h.do(t, p.req())
		expect(t, got, 200, nil)
		if strings.HasPrefix(p.name, "dispatch") {
			inv = proof(t, got)["invocation_id"].(string)
		}
		n := rowsRead(t, got)
		line := lastD1(t, h)
		if line.RowsRead != n {
			t.Errorf("%s: the header says %d rows read, /_worker/stats %d", p.name, n, line.RowsRead)
		}
		t.Logf("%s: %d rows read, %d written, %d statements (session %s)", p.name, n, line.RowsWritten, line.Statements, line.Session)
		for _, s := range line.Each {
			t.Logf("    %6d read %4d written  %s", s.RowsRead, s.Written, s.SQL)
		}
		if p.limit >= 0 && n > p.limit {
			t.Errorf("%s read %d rows of a 10,000-row directory (at most %d expected)", p.name, n, p.limit)
		}
	}

	// An MCP session's tool list (the enabled, visible rows in canonical
	// order, up to its cap) reads about the page it lists, not the table.
	mcp := map[string]string{"Accept": "application/json, text/event-stream"}
	init := h.do(t, req{Method: "POST", Path: "/mcp", Header: mcp, Body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":` +
		`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"d1test","version":"1"}}}`})
	expect(t, init, 200, nil)
	mcp["Mcp-Session-Id"] = init.Header.Get("Mcp-Session-Id")
	h.do(t, req{Method: "POST", Path: "/mcp", Header: mcp, Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
	list := h.do(t, req{Method: "POST", Path: "/mcp", Header: mcp, Body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`})
	expect(t, list, 200, nil)
	if !strings.Contains(string(list.Raw), "W_ECHO") && !strings.Contains(string(list.Raw), "_00") {
		t.Fatalf("tools/list: %.300s", list.Raw)
	}
	n := rowsRead(t, init) + rowsRead(t, list)
	t.Logf("MCP initialize and tools/list: %d + %d rows read", rowsRead(t, init), rowsRead(t, list))
	if n > 2*rowcall.MaxPage {
		t.Errorf("an MCP tool list read %d rows of a 10,000-row directory", n)
	}
}

// The Sessions API's round trip: every answer carries x-d1-bookmark, the
// newest bookmark the worker has seen (at least its own writes'); a client
// that sends it back reads in a session started from it, so it reads its own
// write whichever copy serves it. (wrangler dev's local D1 is one copy: it
// cannot lag, so what this test checks is that the bookmark travels — out in
// the header, back into env.DB.withSession, as /_worker/stats shows — and
// that it moves forward with every write.)
func TestD1Bookmark(t *testing.T) {
	tg := startWorker(t, nil)
	h := tg.host
	bookmark := func(r resp) string {
		t.Helper()
		b := r.Header.Get("X-D1-Bookmark")
		if b == "" {
			t.Fatalf("no x-d1-bookmark on %d %s", r.Status, r.Raw)
		}
		return b
	}
	withBookmark := func(r req, b string) req {
		r.Header = map[string]string{"X-D1-Bookmark": b}
		return r
	}

	created := h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "BM_ROW", "type": "http",
		"target": "GET http://127.0.0.1:1/x", "content": "# WHAT: first"}})
	expect(t, created, 201, nil)
	b1 := bookmark(created)
	if s := lastD1(t, h).Session; s != "first-primary" {
		t.Fatalf("a write ran in a session from %q, want first-primary", s)
	}

	// Read the write with its bookmark: the session starts from it.
	got := h.do(t, withBookmark(req{Method: "GET", Path: "/api/directory/BM_ROW"}, b1))
	expect(t, got, 200, map[string]any{"key": "BM_ROW", "version": 1})
	if s := lastD1(t, h).Session; s != b1 {
		t.Fatalf("the read's session started from %q, want the bookmark %q", s, b1)
	}

	// A second write moves the bookmark on; reading with the new one sees it.
	patched := h.do(t, withBookmark(req{Method: "PATCH", Path: "/api/directory/BM_ROW", Body: map[string]any{"content": "# WHAT: second"}}, b1))
	expect(t, patched, 200, map[string]any{"version": 2})
	b2 := bookmark(patched)
	if !(b2 > b1) {
		t.Fatalf("the bookmark did not move forward with a write: %q then %q", b1, b2)
	}
	got = h.do(t, withBookmark(req{Method: "GET", Path: "/api/directory?limit=5"}, b2))
	expect(t, got, 200, nil)
	if rows := got.JSON["rows"].([]any); len(rows) != 1 || rows[0].(map[string]any)["version"] != 2.0 {
		t.Fatalf("a read with the write's bookmark: %s", got.Raw)
	}
	if s := lastD1(t, h).Session; s != b2 {
		t.Fatalf("the list's session started from %q, want %q", s, b2)
	}

	// A dispatch's receipt is written by the receipt log's writer; the answer
	// still carries a bookmark at least as new as that write.
	disp := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "BM_ROW", "body": ""}})
	expect(t, disp, 200, nil)
	bd := bookmark(disp)
	var st struct {
		D1 struct {
			Bookmark string `json:"bookmark"`
		} `json:"d1"`
	}
	sr := h.do(t, req{Method: "GET", Path: "/_worker/stats"})
	if err := json.Unmarshal(sr.Raw, &st); err != nil || st.D1.Bookmark == "" || bd < st.D1.Bookmark || !(bd > b2) {
		t.Fatalf("the dispatch's bookmark %q, the newest the worker saw %q (%v), the patch's %q", bd, st.D1.Bookmark, err, b2)
	}
	rcs := h.do(t, withBookmark(req{Method: "GET", Path: "/api/receipts"}, bd))
	expect(t, rcs, 200, nil)
	if !strings.Contains(string(rcs.Raw), proof(t, disp)["invocation_id"].(string)) {
		t.Fatalf("the receipts read with the dispatch's bookmark lack its receipt: %s", rcs.Raw)
	}

	// Reads without a bookmark may come from any copy; a token's requests
	// start on the primary (a revoked token stops at once).
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/BM_ROW"}), 200, nil)
	if s := lastD1(t, h).Session; s != "first-unconstrained" {
		t.Fatalf("a plain read's session: %q", s)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/BM_ROW",
		Header: map[string]string{"Authorization": "Bearer rct_notatoken"}, NoAuth: true}), 401, nil)
	if s := lastD1(t, h).Session; s != "first-primary" {
		t.Fatalf("a token's read: %q", s)
	}

	// A bookmark that is not one is refused, and nothing runs.
	bad := h.do(t, withBookmark(req{Method: "PATCH", Path: "/api/directory/BM_ROW", Body: map[string]any{"content": "# WHAT: third"}}, "x'; DROP"))
	expect(t, bad, 400, map[string]any{"error": "invalid_request"})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/BM_ROW"}), 200, map[string]any{"version": 2})
}
