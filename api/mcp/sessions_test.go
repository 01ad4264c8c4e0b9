package mcp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

// initAs sends initialize with the credential key (X-Terminal-Key) and, when
// it opened a session, notifications/initialized; it returns the session id
// (none when refused), the status and the body.
func initAs(t testing.TB, srv *httptest.Server, key string) (id string, code int, body string) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("X-Terminal-Key", key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	id = res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != 200 || id == "" {
		return "", res.StatusCode, string(b)
	}
	if code, body := sendAs(t, srv, key, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != 202 {
		t.Fatalf("initialized: %d %s", code, body)
	}
	return id, res.StatusCode, string(b)
}

// sendAs posts one JSON-RPC message on session id with the credential key.
func sendAs(t testing.TB, srv *httptest.Server, key, id, msg string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(msg))
	req.Header.Set("X-Terminal-Key", key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// open initializes one session with each key, in order; it returns their ids.
func open(t *testing.T, srv *httptest.Server, keys ...string) []string {
	t.Helper()
	var ids []string
	for _, key := range keys {
		id, code, body := initAs(t, srv, key)
		if id == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
		ids = append(ids, id)
	}
	return ids
}

const listTools = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// callers is a Caller for the owner key "owner" and for every key "token-X":
// a token of id X that may call every row.
func callers(r *http.Request) (Caller, bool) {
	k := r.Header.Get("X-Terminal-Key")
	if k == "owner" {
		return Caller{Owner: true, Actor: "owner:terminal-key"}, true
	}
	if id, ok := strings.CutPrefix(k, "token-"); ok {
		return Caller{Token: &rowcall.Token{ID: id, Categories: []string{"*"}, RiskCeiling: rowcall.RiskHigh}, Actor: "token:" + id}, true
	}
	return Caller{}, false
}

// heapPerSession opens n sessions for one token over a directory of rows
// rows (each a tool) and returns the heap and goroutines each one holds.
func heapPerSession(t testing.TB, n, rows int) (bytes, goroutines float64) {
	srv, store := newHandler(t.(*testing.T), Config{Caller: callers, Limits: Limits{MaxSessions: n + 1, SessionsPerCredential: n + 1}})
	for i := range rows - 1 { // TEMP is the first
		row := rowcall.NewRow(fmt.Sprintf("ROW_%02d", i), rowcall.TypeHTTP)
		row.Target = "GET http://127.0.0.1:9/v1/x?q=$1"
		row.Content = "# WHAT: A row listed as a tool, with a description of ordinary length for a directory row.\n# WHEN_TO_USE: measuring what a session holds.\n# ARGS: $1=query"
		if _, err := store.Create(context.Background(), row); err != nil {
			t.Fatal(err)
		}
	}
	id, _, _ := initAs(t, srv, "token-m") // the first session pays for what every later one shares
	if code, body := sendAs(t, srv, "token-m", id, listTools); code != 200 || strings.Count(body, `"name":`) != rows+2 {
		t.Fatalf("tools/list %d: %s", code, body)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g := runtime.NumGoroutine()
	for range n {
		if id, code, body := initAs(t, srv, "token-m"); id == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
	}
	srv.Client().CloseIdleConnections()
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc+after.StackInuse) - int64(before.HeapAlloc+before.StackInuse)
	return float64(held) / float64(n), float64(runtime.NumGoroutine()-g) / float64(n)
}

// What one open session costs: the heap and goroutines n sessions of one
// token hold over a 22-row directory (24 tools with the meta-tools), each.
//
//	go test ./api/mcp -run TestSessionCost -count 1 -v
func TestSessionCost(t *testing.T) {
	const n, rows = 400, 22
	b, g := heapPerSession(t, n, rows)
	t.Logf("%d sessions of one token over %d rows: %.0f bytes (heap and stacks) and %.2f goroutines a session", n, rows, b, g)
	if b > 20<<10 { // each session copying its tool definitions held 33 KB here
		t.Fatalf("a session holds %.0f bytes: its tool definitions are copied, not shared", b)
	}
}

// A credential past its cap: the initialize closes its least recently used
// idle session, whose next request is the specification's 404 (so a client
// initializes again); the credential's other sessions and another
// credential's are untouched.
//
//	go test ./api/mcp -run TestSessionCaps -count 1
func TestSessionCapsEvictOldestIdle(t *testing.T) {
	srv, _ := newHandler(t, Config{Caller: callers, Limits: Limits{SessionsPerCredential: 3, MaxSessions: 10}})
	other, _, _ := initAs(t, srv, "token-b")
	ids := open(t, srv, "token-a", "token-a", "token-a")
	// The first is now the most recently used; the second is the oldest idle.
	if code, body := sendAs(t, srv, "token-a", ids[0], listTools); code != 200 {
		t.Fatalf("tools/list: %d %s", code, body)
	}
	fourth, code, body := initAs(t, srv, "token-a")
	if fourth == "" {
		t.Fatalf("an initialize past the cap with idle sessions: %d %s", code, body)
	}
	if code, body := sendAs(t, srv, "token-a", ids[1], listTools); code != http.StatusNotFound {
		t.Fatalf("the evicted session answers %d %s, not 404", code, body)
	}
	for _, id := range []string{ids[0], ids[2], fourth} {
		if code, body := sendAs(t, srv, "token-a", id, listTools); code != 200 {
			t.Fatalf("a session within the cap: %d %s", code, body)
		}
	}
	if code, body := sendAs(t, srv, "token-b", other, listTools); code != 200 {
		t.Fatalf("another credential's session: %d %s", code, body)
	}
}

// Past the cap with every session serving a request, an initialize is
// refused 429 too_many_sessions, and no session is closed.
func TestSessionCapsRefuseWhenNoneIdle(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
		io.WriteString(w, `{"temperature_2m":1}`)
	}))
	t.Cleanup(up.Close)
	srv, store := newHandler(t, Config{Caller: callers, Limits: Limits{SessionsPerCredential: 2, MaxSessions: 10}})
	t.Cleanup(func() { close(release) }) // before the server closes
	row, _ := store.Lookup(context.Background(), "TEMP")
	row.Target = "GET " + up.URL + "/slow?latitude=$1&longitude=$2"
	if _, err := store.Replace(context.Background(), row, row.Version); err != nil {
		t.Fatal(err)
	}
	ids := open(t, srv, "token-a", "token-a")
	for _, id := range ids {
		go func() { // a call that waits for release: the session is busy
			req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"TEMP","arguments":{"args":"1|2"}}}`))
			req.Header.Set("X-Terminal-Key", "token-a")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			if res, err := srv.Client().Do(req); err == nil {
				res.Body.Close()
			}
		}()
		<-started
	}
	_, code, body := initAs(t, srv, "token-a")
	if code != http.StatusTooManyRequests || !strings.Contains(body, "too_many_sessions") {
		t.Fatalf("an initialize past the cap with no idle session: %d %s", code, body)
	}
	if _, code, body := initAs(t, srv, "token-b"); code != 200 {
		t.Fatalf("another credential's initialize: %d %s", code, body)
	}
	for _, id := range ids {
		st := srv.Config.Handler.(*Handler).sessions[id]
		if st == nil {
			t.Fatalf("session %s was closed", id)
		}
	}
}

// The host's cap counts every credential: past it, the least recently used
// idle session of any credential is closed.
func TestSessionCapsTotal(t *testing.T) {
	srv, _ := newHandler(t, Config{Caller: callers, Limits: Limits{SessionsPerCredential: 10, MaxSessions: 3}})
	ids := open(t, srv, "token-a", "token-b", "token-c")
	if id, code, body := initAs(t, srv, "token-d"); id == "" {
		t.Fatalf("an initialize past the host's cap: %d %s", code, body)
	}
	if code, body := sendAs(t, srv, "token-a", ids[0], listTools); code != http.StatusNotFound {
		t.Fatalf("the oldest idle session answers %d %s, not 404", code, body)
	}
	for i, key := range []string{"token-b", "token-c"} {
		if code, body := sendAs(t, srv, key, ids[i+1], listTools); code != 200 {
			t.Fatalf("%s's session: %d %s", key, code, body)
		}
	}
}

// A session the handler has let go of answers 404 at once, with rowcall's
// code, even while the SDK has not yet finished closing it (the SDK drops a
// session from its own map only after its streams have ended).
func TestEndedSessionAnswers404(t *testing.T) {
	srv, _ := newHandler(t, Config{Caller: callers})
	id := open(t, srv, "token-a")[0]
	if code, body := sendAs(t, srv, "token-a", id, listTools); code != 200 {
		t.Fatalf("an open session: %d %s", code, body)
	}
	h := srv.Config.Handler.(*Handler)
	h.drop(id) // as the idle poller and the cap's eviction do, before they close it
	code, body := sendAs(t, srv, "token-a", id, listTools)
	if code != http.StatusNotFound || !strings.Contains(body, "not_found") {
		t.Fatalf("a session the handler let go: %d %q, want 404 not_found", code, body)
	}
}
