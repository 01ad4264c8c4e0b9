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
