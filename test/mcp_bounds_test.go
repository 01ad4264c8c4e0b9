package test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// The bounds of /mcp: the web origins it answers, and how many sessions a
// credential and the host may hold, for how long.

const mcpInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// mcpPost is one raw JSON-RPC request to /mcp as the owner, on session id
// ("": none), with extra headers.
func mcpPost(t testing.TB, h *host, id, body string, extra map[string]string) resp {
	t.Helper()
	hd := map[string]string{"Accept": "application/json, text/event-stream"}
	if id != "" {
		hd["Mcp-Session-Id"], hd["Mcp-Protocol-Version"] = id, "2025-11-25"
	}
	for k, v := range extra {
		hd[k] = v
	}
	return h.do(t, req{Method: "POST", Path: "/mcp", Body: body, Header: hd})
}

// mcpOpen initializes a session as the owner; it returns its id.
func mcpOpen(t testing.TB, h *host) string {
	t.Helper()
	r := mcpPost(t, h, "", mcpInitialize, nil)
	id := r.Header.Get("Mcp-Session-Id")
	if r.Status != 200 || id == "" {
		t.Fatalf("initialize: %d %s", r.Status, r.Raw)
	}
	if r := mcpPost(t, h, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); r.Status != 202 {
		t.Fatalf("initialized: %d %s", r.Status, r.Raw)
	}
	return id
}

const mcpList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// suiteMCPOrigin: a page of another web origin is refused 403 on every
// method of /mcp, before its credential is read; loopback origins, the
// host's own, the configured ones (ROWCALL_MCP_ORIGINS, set by TestHosts)
// and requests without Origin (programs) are served.
func suiteMCPOrigin(t *testing.T, tg *target) {
	u, _ := url.Parse(tg.URL)
	for _, o := range []string{"", "http://localhost:5173", "http://127.0.0.1:9", "http://[::1]:3000", u.Scheme + "://" + u.Host, suiteMCPOrigins} {
		if r := mcpPost(t, tg.host, "", mcpInitialize, map[string]string{"Origin": o}); r.Status != 200 || !strings.Contains(string(r.Raw), `"serverInfo"`) {
			t.Fatalf("initialize from origin %q: %d %s", o, r.Status, r.Raw)
		}
	}
	for _, o := range []string{"https://evil.example", "null", "http://localhost.evil.example", "https://console.example.test:8443"} {
		for _, m := range []string{"POST", "GET", "DELETE"} {
			r := tg.do(t, req{Method: m, Path: "/mcp", Body: mcpInitialize, Header: map[string]string{"Origin": o, "Accept": "application/json, text/event-stream"}})
			expect(t, r, http.StatusForbidden, map[string]any{"error": "forbidden"})
			if !strings.Contains(r.JSON["how_to_fix"].(string), "ROWCALL_MCP_ORIGINS") {
				t.Fatalf("%s from %q: %s", m, o, r.Raw)
			}
		}
		// Refused before the credential is read: without one it is 403 too.
		expect(t, tg.do(t, req{Method: "POST", Path: "/mcp", Body: mcpInitialize, NoAuth: true, Header: map[string]string{"Origin": o}}), http.StatusForbidden, nil)
	}
}

// suiteCORS: a browser-based client at an allowed origin may call /mcp: its
// preflight is answered without a credential, and the answers (a 401's
// WWW-Authenticate, initialize's Mcp-Session-Id) are readable to it; a
// disallowed origin's preflight is refused. The OAuth metadata, token and
// registration endpoints answer any origin (they read no cookie).
func suiteCORS(t *testing.T, tg *target) {
	preflight := func(path, origin, headers string) resp {
		t.Helper()
		return tg.do(t, req{Method: "OPTIONS", Path: path, NoAuth: true, Header: map[string]string{"Origin": origin,
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": headers}})
	}
	lists := func(r resp, name, want string) {
		t.Helper()
		got := strings.ToLower(r.Header.Get(name))
		for _, w := range strings.Split(strings.ToLower(want), ",") {
			if !slices.Contains(strings.Split(strings.ReplaceAll(got, " ", ""), ","), strings.TrimSpace(w)) {
				t.Fatalf("%s %q does not list %s (status %d)", name, got, w, r.Status)
			}
		}
	}
	r := preflight("/mcp", suiteMCPOrigins, "authorization,content-type,mcp-session-id,mcp-protocol-version,last-event-id,mcp-param-region")
	if r.Status != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != suiteMCPOrigins {
		t.Fatalf("preflight from %s: %d Access-Control-Allow-Origin %q: %s", suiteMCPOrigins, r.Status, r.Header.Get("Access-Control-Allow-Origin"), r.Raw)
	}
	lists(r, "Access-Control-Allow-Methods", "GET, POST, DELETE")
	lists(r, "Access-Control-Allow-Headers", "Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, Mcp-Param-Region")
	for _, o := range []string{"https://evil.example", "null"} {
		if r := preflight("/mcp", o, "authorization"); r.Status != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("preflight from %s: %d Access-Control-Allow-Origin %q, want 403 and none", o, r.Status, r.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	r = tg.do(t, req{Method: "POST", Path: "/mcp", Body: mcpInitialize, NoAuth: true, Header: map[string]string{"Origin": suiteMCPOrigins}})
	if r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") == "" || r.Header.Get("Access-Control-Allow-Origin") != suiteMCPOrigins {
		t.Fatalf("initialize without a credential from %s: %d %v", suiteMCPOrigins, r.Status, r.Header)
	}
	lists(r, "Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate")
	r = mcpPost(t, tg.host, "", mcpInitialize, map[string]string{"Origin": suiteMCPOrigins})
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != suiteMCPOrigins {
		t.Fatalf("initialize from %s: %d %v", suiteMCPOrigins, r.Status, r.Header)
	}
	lists(r, "Access-Control-Expose-Headers", "Mcp-Session-Id")

	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/oauth/token", "/oauth/register"} {
		r := preflight(path, "https://any.example", "authorization,content-type,mcp-protocol-version")
		if r.Status >= 300 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("preflight of %s: %d Access-Control-Allow-Origin %q", path, r.Status, r.Header.Get("Access-Control-Allow-Origin"))
		}
		lists(r, "Access-Control-Allow-Headers", "Authorization, Content-Type, Mcp-Protocol-Version")
		if path != "/oauth/register" && path != "/oauth/token" {
			if r := tg.do(t, req{Method: "GET", Path: path, NoAuth: true, Header: map[string]string{"Origin": "https://any.example"}}); r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Fatalf("GET %s from a page: %d Access-Control-Allow-Origin %q", path, r.Status, r.Header.Get("Access-Control-Allow-Origin"))
			}
		}
	}
	r = tg.do(t, req{Method: "POST", Path: "/oauth/token", NoAuth: true, Body: "grant_type=refresh_token&client_id=oc_x&refresh_token=rcr_x",
		Header: map[string]string{"Origin": "https://any.example", "Content-Type": "application/x-www-form-urlencoded"}})
	if r.Status != 400 || r.JSON["error"] != "invalid_grant" || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("a token request's error from a page: %d %v %s", r.Status, r.Header, r.Raw)
	}
}

// suiteMCPOrigins is the origin TestHosts configures (ROWCALL_MCP_ORIGINS).
const suiteMCPOrigins = "https://console.example.test"

// The host's public URL (--public-url) is its own origin; another port of
// it is not.
//
//	go test ./test -count 1 -run TestMCPOriginPublicURL
func TestMCPOriginPublicURL(t *testing.T) {
	h := startHost(t, append(slices.Clone(allowLoopback), "--public-url", "https://rowcall.example.test/"), "ROWCALL_MCP_ORIGINS=http://tools.example.test:8080")
	for o, want := range map[string]int{"https://rowcall.example.test": 200, "https://ROWCALL.example.test:443": 200, "http://tools.example.test:8080": 200,
		"https://rowcall.example.test:8443": 403, "http://rowcall.example.test": 403, "http://tools.example.test": 403} {
		if r := mcpPost(t, h, "", mcpInitialize, map[string]string{"Origin": o}); r.Status != want {
			t.Fatalf("origin %q: %d, want %d: %s", o, r.Status, want, r.Raw)
		}
	}
}

// Past ROWCALL_MCP_SESSIONS_PER_CREDENTIAL, an initialize closes the credential's
// least recently used idle session (its next request is the
// specification's 404, so its client initializes again); when every session
// is serving a request, it is refused 429 too_many_sessions and nothing is
// closed.
//
//	go test ./test -count 1 -run TestMCPSessionCap
func TestMCPSessionCap(t *testing.T) {
	h := startHost(t, allowLoopback, "ROWCALL_MCP_SESSIONS_PER_CREDENTIAL=2")
	release := make(chan struct{})
	slow := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { <-release; w.Write([]byte(`{"ok":1}`)) })
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	createRow(t, h, map[string]any{"key": "SLOW", "type": "http", "category": "tools", "target": "GET " + slow.URL + "/slow"})

	first, second := mcpOpen(t, h), mcpOpen(t, h)
	if r := mcpPost(t, h, first, mcpList, nil); r.Status != 200 { // the second is now the least recently used
		t.Fatalf("tools/list: %d %s", r.Status, r.Raw)
	}
	third := mcpOpen(t, h)
	if r := mcpPost(t, h, second, mcpList, nil); r.Status != http.StatusNotFound {
		t.Fatalf("the least recently used session past the cap: %d %s, want 404", r.Status, r.Raw)
	}
	for _, id := range []string{first, third} {
		if r := mcpPost(t, h, id, mcpList, nil); r.Status != 200 {
			t.Fatalf("a session within the cap: %d %s", r.Status, r.Raw)
		}
	}

	// Both sessions busy: the next initialize is refused.
	done := make(chan resp, 2)
	for _, id := range []string{first, third} {
		go func() {
			r, _ := h.send(req{Method: "POST", Path: "/mcp", Body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"call_capability","arguments":{"key":"SLOW"}}}`,
				Header: map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}})
			done <- r
		}()
	}
	for deadline := time.Now().Add(30 * time.Second); len(slow.requests()) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow calls did not reach the upstream: %d", len(slow.requests()))
		}
	}
	r := mcpPost(t, h, "", mcpInitialize, nil)
	expect(t, r, http.StatusTooManyRequests, map[string]any{"error": "too_many_sessions"})
	if fix, _ := r.JSON["how_to_fix"].(string); !strings.Contains(fix, "DELETE /mcp") {
		t.Fatalf("refusal: %s", r.Raw)
	}
	close(release)
	for range 2 {
		if r := <-done; r.Status != 200 || !strings.Contains(string(r.Raw), `\"ok\":1`) {
			t.Fatalf("a busy session's call: %d %s", r.Status, r.Raw)
		}
	}
	if r := mcpPost(t, h, first, mcpList, nil); r.Status != 200 {
		t.Fatalf("a session that was busy at the refusal: %d %s", r.Status, r.Raw)
	}
}

// ROWCALL_MCP_IDLE closes a session that sent no request for that long (its
// notification stream, which is not a request, ends with it); its next
// request is the specification's 404.
//
//	go test ./test -count 1 -run TestMCPSessionIdle
func TestMCPSessionIdle(t *testing.T) {
	h := startHost(t, allowLoopback, "ROWCALL_MCP_IDLE=2s")
	id := mcpOpen(t, h)
	opened := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, "GET", h.URL+"/mcp", nil)
	get.Header.Set("x-terminal-key", h.Key)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", id)
	get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(get)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the notification stream: %v %v", res, err)
	}
	io.Copy(io.Discard, res.Body) // until the session is closed
	res.Body.Close()
	if ctx.Err() != nil {
		t.Fatal("a session idle for a minute is still open")
	}
	if idle := time.Since(opened); idle < 2*time.Second {
		t.Fatalf("closed after %s idle, before ROWCALL_MCP_IDLE", idle)
	}
	r := mcpPost(t, h, id, mcpList, nil)
	expect(t, r, http.StatusNotFound, map[string]any{"error": "not_found"})
	if fix, _ := r.JSON["how_to_fix"].(string); !strings.Contains(fix, "initialize a new session") {
		t.Fatalf("a closed session's answer: %s", r.Raw)
	}
}
