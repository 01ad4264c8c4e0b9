package test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/connect"
	"github.com/rowcall/rowcall/internal/learn"
	"github.com/rowcall/rowcall/sqlstore"
)

// suiteBounds: what a caller without the owner's trust can make a host do
// (docs/security.md). An ask past its bounds (words, bytes) is a 400 with
// how_to_fix through the API and the same message as an MCP tool error; a
// 401 says which headers carry a credential and is the same for no
// credential, a wrong key, an unknown token and a revoked one; an expires_in
// past ten years mints nothing; the public receipt page has the console's
// CSP, no framing and nosniff; a body over 4 MiB is refused saying 4 MiB,
// and every route refuses a body over its own bound, unread and changing
// nothing.
func suiteBounds(t *testing.T, tg *target, up *upstream) {
	h := tg.host
	createRow(t, h, map[string]any{"key": "S_BOUND", "type": "http", "target": "GET " + up.URL + "/bound?q=$1",
		"content": "# WHAT: count the zebras in the workspace", "category": "suite_bound", "examples": `["a"]`})

	t.Run("ask", func(t *testing.T) {
		ask := func(words []string) resp {
			return h.do(t, req{Method: "GET", Path: "/api/dispatch?ask=" + url.QueryEscape(strings.Join(words, " "))})
		}
		words := []string{"zebras"}
		for i := range 199 {
			words = append(words, fmt.Sprintf("w%03d", i))
		}
		// At the bound the question is searched and answered. (Which rows
		// rank first for 63 made-up words depends on the rows the suite wrote
		// before; sqlstore's TestSearchManyTerms checks the words' counts.)
		got := ask(words[:64])
		expect(t, got, 200, nil)
		if _, ok := got.JSON["matches"].([]any); !ok || got.JSON["ask"] != strings.Join(words[:64], " ") {
			t.Fatalf("64 words: %s", got.Raw)
		}
		got = ask(words)
		expect(t, got, 400, map[string]any{"error": "ask_too_long",
			"message": "the question is 200 words; an ask takes at most 64 words in 2000 bytes"})
		if fix, _ := got.JSON["how_to_fix"].(string); !strings.Contains(fix, "plain words") {
			t.Fatalf("no how_to_fix: %s", got.Raw)
		}
		expect(t, ask([]string{strings.Repeat("zebra", 500)}), 400, map[string]any{"error": "ask_too_long",
			"message": "the question is 2500 bytes; an ask takes at most 64 words in 2000 bytes"})

		// MCP's search_capabilities: the same refusal, as a tool error.
		mcp := connectMCP(t, h, "x-terminal-key", h.Key)
		res := mcp.call(t, "search_capabilities", map[string]any{"query": strings.Join(words, " ")})
		want := "ERR:ask_too_long: " + got.JSON["message"].(string)
		if sc := structured(t, res.StructuredContent); !res.IsError || len(texts(res)) == 0 || !strings.HasPrefix(texts(res)[0], want) ||
			sc["error"] != "ask_too_long" || sc["how_to_fix"] == nil {
			t.Fatalf("search_capabilities of 200 words: error %v %q %v", res.IsError, texts(res), sc)
		}
		if res := mcp.call(t, "search_capabilities", map[string]any{"query": strings.Join(words[:64], " ")}); res.IsError {
			t.Fatalf("search_capabilities of 64 words: %q", texts(res))
		}
	})

	t.Run("unauthorized", func(t *testing.T) {
		secret, id, _ := mint(t, h, map[string]any{"keys": []string{"S_BOUND"}})
		expect(t, h.do(t, req{Method: "DELETE", Path: "/api/tokens/" + id}), 200, nil)
		var first resp
		for i, hdr := range []map[string]string{nil, {"x-terminal-key": "wrong"}, {"Authorization": "Bearer wrong"},
			{"Authorization": "Bearer rct_not-a-real-token"}, {"Authorization": "Bearer " + secret}} {
			got := h.do(t, req{Method: "GET", Path: "/api/directory/S_BOUND", NoAuth: true, Header: hdr})
			expect(t, got, 401, map[string]any{"error": "unauthorized"})
			if fix, _ := got.JSON["how_to_fix"].(string); got.JSON["message"] == nil ||
				!strings.Contains(fix, "x-terminal-key") || !strings.Contains(fix, "Authorization: Bearer") {
				t.Fatalf("401 with %v: %s", hdr, got.Raw)
			}
			if got.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("401 with %v has no WWW-Authenticate", hdr)
			}
			if i == 0 {
				first = got
			} else if string(got.Raw) != string(first.Raw) {
				t.Fatalf("401 with %v differs from one with no credential:\n%s\n%s", hdr, got.Raw, first.Raw)
			}
		}
	})

	t.Run("expires_in", func(t *testing.T) {
		before := len(h.do(t, req{Method: "GET", Path: "/api/tokens"}).JSON["tokens"].([]any))
		for _, n := range []int64{1 << 62, -1, 315_360_001} {
			got := h.do(t, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"keys": []string{"S_BOUND"}, "expires_in": n}})
			expect(t, got, 422, map[string]any{"error": "expiry_out_of_range", "state_changed": false,
				"message": fmt.Sprintf("expires_in must be from 1 to 315360000 seconds (ten years); got %d", n)})
			if got.JSON["how_to_fix"] == nil {
				t.Fatalf("no how_to_fix: %s", got.Raw)
			}
		}
		if after := len(h.do(t, req{Method: "GET", Path: "/api/tokens"}).JSON["tokens"].([]any)); after != before {
			t.Fatalf("refused mints left %d tokens, were %d", after, before)
		}
		mint(t, h, map[string]any{"keys": []string{"S_BOUND"}, "expires_in": 315_360_000})
	})

	t.Run("receipt page", func(t *testing.T) {
		got := h.do(t, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "S_BOUND", "body": "a"}})
		id := proof(t, got)["invocation_id"].(string)
		for _, accept := range []string{"text/html", "application/json"} {
			got := h.do(t, req{Method: "GET", Path: "/receipt/" + id, NoAuth: true, Header: map[string]string{"Accept": accept}})
			csp := got.Header.Get("Content-Security-Policy")
			if got.Status != 200 || !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") ||
				got.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("/receipt/%s (%s): %d, CSP %q, X-Content-Type-Options %q", id, accept, got.Status, csp, got.Header.Get("X-Content-Type-Options"))
			}
			if accept == "text/html" && (strings.Contains(string(got.Raw), "<style") || !strings.Contains(string(got.Raw), `href="../console/receipt.css"`)) {
				t.Fatalf("the page's style is not its stylesheet (the CSP allows no inline style): %s", got.Raw)
			}
		}
		if css := h.do(t, req{Method: "GET", Path: "/console/receipt.css", NoAuth: true}); css.Status != 200 || !strings.Contains(string(css.Raw), "font:") {
			t.Fatalf("/console/receipt.css: %d %.200s", css.Status, css.Raw)
		}
	})

	t.Run("body limit", func(t *testing.T) {
		got := h.do(t, req{Method: "POST", Path: "/api/directory", Body: `{"key":"S_HUGE","type":"fn","content":"` + strings.Repeat("y", 5<<20) + `"}`})
		expect(t, got, 413, map[string]any{"error": "too_large", "state_changed": false,
			"message": "the request body is over 4 MiB (4194304 bytes), the largest body the API reads"})
		if fix, _ := got.JSON["how_to_fix"].(string); !strings.Contains(fix, "4 MiB") || strings.Contains(string(got.Raw), "2000000") {
			t.Fatalf("the body limit's answer: %s", got.Raw)
		}
	})

	t.Run("every route", func(t *testing.T) { suiteBodies(t, h) })
}

// apiRoutes is every route the API registers (api.Handler.Routes), with every
// part a host may leave out (OAuth, connections, learned phrases) on.
func apiRoutes(t *testing.T) []api.Route {
	a := api.New(api.Config{OAuth: (*sqlstore.Store)(nil), Connect: &connect.Service{}, Learned: (*learn.Learner)(nil)}, nil, nil, nil)
	defer a.Close()
	return a.Routes()
}

// routeRequest is a method and path pattern matches: a wildcard is "x", a
// pattern without a method takes a POST.
func routeRequest(pattern string) (method, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "POST", pattern
	}
	path = strings.ReplaceAll(path, "{$}", "")
	path = regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(path, "x")
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "x"
	}
	return method, path
}

// suiteBodies sends every route of the API, as it registers them, a body one
// byte over its bound: each is 413 too_large saying the bound, answered
// before the body is read, and nothing the owner can read changed. A body
// of unknown length (chunked) is refused the same once read past the bound.
func suiteBodies(t *testing.T, h *host) {
	routes := apiRoutes(t)
	if len(routes) < 50 {
		t.Fatalf("the API registers %d routes", len(routes))
	}
	state := func() string {
		var b strings.Builder
		for _, p := range []string{"/api/directory?limit=1000", "/api/tokens", "/api/modules", "/api/receipts", "/api/learned"} {
			got := h.do(t, req{Method: "GET", Path: p})
			fmt.Fprintf(&b, "%s %d %s\n", p, got.Status, got.Raw)
		}
		return b.String()
	}
	refused := func(got resp, limit int64, what string) {
		t.Helper()
		if got.Status != http.StatusRequestEntityTooLarge || got.JSON["error"] != "too_large" || got.JSON["max_body"] != float64(limit) {
			t.Fatalf("%s: %d %.300s, want 413 too_large with max_body %d", what, got.Status, got.Raw, limit)
		}
		// "over 16 KiB (16384 bytes)"; how_to_fix: "at most 16 KiB".
		msg, _ := got.JSON["message"].(string)
		_, said, _ := strings.Cut(msg, "over ")
		said, ok := strings.CutSuffix(said[:max(0, strings.Index(said, ")"))], fmt.Sprintf(" (%d bytes", limit))
		if fix, _ := got.JSON["how_to_fix"].(string); !ok || said == "" || !strings.Contains(fix, "at most "+said) {
			t.Fatalf("%s: the message and how_to_fix do not say the bound %d: %s", what, limit, got.Raw)
		}
	}
	before := state()
	for _, rt := range routes {
		method, path := routeRequest(rt.Pattern)
		what := fmt.Sprintf("%s %s (%s, bound %d)", method, path, rt.Pattern, rt.MaxBody)
		got := h.do(t, req{Method: method, Path: path, Body: bytes.Repeat([]byte("a"), int(rt.MaxBody)+1)})
		limit := rt.MaxBody
		if got.Status == http.StatusNotFound && strings.HasSuffix(fmt.Sprint(got.JSON["message"]), "is not part of the API") {
			// A part this host leaves out (connections without providers):
			// the request is the catch-all's, whose bound is the API's.
			limit = api.MaxBody
			got = h.do(t, req{Method: method, Path: path, Body: bytes.Repeat([]byte("a"), int(limit)+1)})
		}
		refused(got, limit, what)
	}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for _, p := range []struct {
		method, path string
		limit        int64
		header       map[string]string
	}{{"POST", "/api/directory", api.MaxBody, nil}, {"POST", "/mcp", api.MaxBody, nil}, {"POST", "/oauth/register", 16 << 10, nil},
		{"POST", "/oauth/token", 16 << 10, form}, {"PUT", "/api/modules/S_BIG", api.MaxAnyBody, nil}} {
		chunked := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte(" "), int(p.limit))), strings.NewReader("{}"))
		refused(h.do(t, req{Method: p.method, Path: p.path, Body: chunked, Header: p.header}), p.limit, p.method+" "+p.path+" chunked")
	}
	if after := state(); after != before {
		t.Fatalf("oversized bodies changed what the owner reads:\nbefore %s\nafter %s", before, after)
	}
}
