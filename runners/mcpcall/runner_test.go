package mcpcall

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

func run(r *Runner, ctx context.Context, row *rowcall.Row, body string, e rowcall.Env) rowcall.Output {
	return r.Run(ctx, &rowcall.Invocation{Row: row, Body: body, Args: strings.Split(body, "|"), Env: e})
}

// A row's tool answers as the package doc says: text as text, structured
// content and images as MCP's JSON, isError as ERR:mcp:tool_error, and the
// pipe arguments arrive named by the row's input_schema.
func TestMCPResults(t *testing.T) {
	u := newUpstream(t, "127.0.0.1:0")
	r := newRunner(allowing(t, u.Server), Config{})
	defer r.Close()
	ctx := context.Background()
	cases := []struct{ tool, body, want string }{
		{"echo", "hello|7", `{"n":7,"text":"hello"}`},
		{"structured", "", `{"content":[{"type":"text","text":"{\"t\":21}"}],"structuredContent":{"t":21}}`},
		{"image", "", `{"content":[{"type":"text","text":"a pixel"},{"type":"image","mimeType":"image/png","data":"AQID"}]}`},
		{"fails", "", "ERR:mcp:tool_error:no such issue"},
	}
	for _, c := range cases {
		out := run(r, ctx, mcpRow(u.URL+"/mcp", c.tool), c.body, nil)
		if out.Result != c.want {
			t.Errorf("%s: got %s\nwant %s", c.tool, out.Result, c.want)
		}
		if !out.Material || out.Status != 200 {
			t.Errorf("%s: material %v status %d", c.tool, out.Material, out.Status)
		}
	}
	if n := u.f.inits.Load(); n != 1 {
		t.Errorf("%d sessions initialized for four calls with one credential; want 1 (pooled)", n)
	}
}

// The row's credential reaches the server's origin and nowhere else: a
// server that redirects to another origin does not get it there.
func TestMCPCredentialStaysWithTheServer(t *testing.T) {
	u := newUpstream(t, "127.0.0.1:0")
	other := newUpstream(t, "127.0.0.2:0")
	var sawAuth []string
	redirect := newUpstream(t, "127.0.0.1:0")
	h := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		sawAuth = append(sawAuth, req.Header.Get("Authorization"))
		http.Redirect(w, req, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	redirect.handler.Store(&h)
	otherHandler := *other.handler.Load()
	var otherAuth []string
	oh := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		otherAuth = append(otherAuth, req.Header.Get("Authorization"))
		otherHandler.ServeHTTP(w, req)
	}))
	other.handler.Store(&oh)
	r := newRunner(allowing(t, u.Server, other.Server, redirect.Server), Config{})
	defer r.Close()
	row := mcpRow(u.URL+"/mcp", "echo")
	row.Auth = "bearer:TEAM_TOKEN"
	e := env("TEAM_TOKEN", "s3cr3t-value")
	if out := run(r, context.Background(), row, "hi", e); out.Fail != nil {
		t.Fatalf("call: %s", out.Result)
	}
	if got, _ := u.f.auth.Load().(string); got != "Bearer s3cr3t-value" {
		t.Fatalf("the server saw Authorization %q", got)
	}
	row = mcpRow(redirect.URL+"/mcp", "echo")
	row.Auth = "bearer:TEAM_TOKEN"
	run(r, context.Background(), row, "hi", e)
	if len(sawAuth) == 0 || sawAuth[0] != "Bearer s3cr3t-value" {
		t.Fatalf("the row's own server saw %q", sawAuth)
	}
	if len(otherAuth) == 0 {
		t.Fatal("the redirect was not followed")
	}
	for _, a := range otherAuth {
		if a != "" {
			t.Fatalf("another origin received the row's credential: %q", a)
		}
	}
}

// The outbound policy holds: a server on loopback that the operator has not
// allowed is refused before any byte is sent.
func TestMCPOutboundPolicy(t *testing.T) {
	u := newUpstream(t, "127.0.0.1:0")
	r := newRunner(allowing(t), Config{})
	defer r.Close()
	out := run(r, context.Background(), mcpRow(u.URL+"/mcp", "echo"), "hi", nil)
	if !strings.HasPrefix(out.Result, "ERR:mcp:fetch:") || !strings.Contains(out.Result, "loopback") || u.f.inits.Load() != 0 {
		t.Fatalf("got %s (sessions %d)", out.Result, u.f.inits.Load())
	}
}

// A cancelled call is cancelled at the server too.
func TestMCPCancelReachesTheServer(t *testing.T) {
	u := newUpstream(t, "127.0.0.1:0")
	r := newRunner(allowing(t, u.Server), Config{})
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan rowcall.Output)
	go func() { done <- run(r, ctx, mcpRow(u.URL+"/mcp", "slow"), "", nil) }()
	waitFor(t, "the session", func() bool { return u.f.inits.Load() == 1 })
	cancel()
	out := <-done
	if out.Fail == nil {
		t.Fatalf("a cancelled call succeeded: %s", out.Result)
	}
	waitFor(t, "the server to see the cancellation", func() bool { return u.f.cancelled.Load() == 1 })
}

// A server that has expired the session gets a new one, and the call goes through.
func TestMCPSessionExpiry(t *testing.T) {
	u := newUpstream(t, "127.0.0.1:0")
	r := newRunner(allowing(t, u.Server), Config{})
	defer r.Close()
	row := mcpRow(u.URL+"/mcp", "echo")
	if out := run(r, context.Background(), row, "one", nil); out.Fail != nil {
		t.Fatal(out.Result)
	}
	u.restart() // every session the server held is gone
	out := run(r, context.Background(), row, "two", nil)
	if out.Result != `{"text":"two"}` || u.f.inits.Load() != 2 {
		t.Fatalf("after expiry: %s (sessions %d)", out.Result, u.f.inits.Load())
	}
}

// An answer larger than the cap is refused, not cut; a dead credential
// reaches the breaker as a 401.
func TestMCPLimitsAndBreaker(t *testing.T) {
	u := newUpstream(t, "127.0.0.1:0")
	r := newRunner(allowing(t, u.Server), Config{MaxResponse: 1024})
	defer r.Close()
	if out := run(r, context.Background(), mcpRow(u.URL+"/mcp", "big"), "", nil); !strings.HasPrefix(out.Result, "ERR:mcp:too_large:1024 bytes") {
		t.Fatalf("big: %s", out.Result)
	}
	inner := *u.handler.Load()
	h := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != "Bearer good" {
			http.Error(w, "bad token s3cr3t-bad", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, req)
	}))
	u.handler.Store(&h)
	row := mcpRow(u.URL+"/mcp", "echo")
	row.Auth = "bearer:TOK"
	out := run(r, context.Background(), row, "x", env("TOK", "s3cr3t-bad"))
	if out.Status != 401 || !strings.HasPrefix(out.Result, "ERR:mcp:401") || strings.Contains(out.Result, "s3cr3t-bad") {
		t.Fatalf("dead credential: status %d %s", out.Status, out.Result)
	}
	if out := run(r, context.Background(), row, "x", env("TOK", "good")); out.Result != `{"text":"x"}` {
		t.Fatalf("fixed credential: %s", out.Result)
	}
}

// The worker's case: no stdio servers, a stable refusal.
func TestMCPStdioRefusedWithoutServers(t *testing.T) {
	r := New(Config{})
	out := run(r, context.Background(), mcpRow("stdio:github", "create_issue"), "", nil)
	if out.Fail == nil || out.Fail.Code != "stdio_unavailable" || !strings.HasPrefix(out.Result, "ERR:mcp:stdio_unavailable:github") {
		t.Fatalf("got %s", out.Result)
	}
}

// stdioServer declares this test binary as the stdio server "faults".
func stdioServer(t *testing.T) *Stdio {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &Stdio{Servers: map[string]StdioServer{"faults": {Command: exe, Env: map[string]string{"MCPCALL_TEST_STDIO": "=1", "VISIBLE": ""}}},
		Getenv: env("VISIBLE", "yes", "HIDDEN_SECRET", "no").Lookup}
	t.Cleanup(s.Close)
	return s
}

// A stdio server sees only its declared variables, survives a crash
// mid-call (the call fails, the next starts it again), and is one warm
// process between calls.
func TestMCPStdioServer(t *testing.T) {
	r := New(Config{Stdio: stdioServer(t)})
	ctx := context.Background()
	out := run(r, ctx, mcpRow("stdio:faults", "env"), "", nil)
	if out.Result != "MCPCALL_TEST_STDIO=1\nVISIBLE=yes" {
		t.Fatalf("environment: %q", out.Result)
	}
	pid := run(r, ctx, mcpRow("stdio:faults", "pid"), "", nil).Result
	if again := run(r, ctx, mcpRow("stdio:faults", "pid"), "", nil).Result; again != pid {
		t.Fatalf("two calls, two processes: %s %s", pid, again)
	}
	out = run(r, ctx, mcpRow("stdio:faults", "crash"), "", nil)
	if !strings.HasPrefix(out.Result, "ERR:mcp:fetch:stdio server faults exited during the call") {
		t.Fatalf("crash: %s", out.Result)
	}
	out = run(r, ctx, mcpRow("stdio:faults", "pid"), "", nil)
	if out.Fail != nil || out.Result == pid {
		t.Fatalf("after the crash: %s (before %s)", out.Result, pid)
	}
	if out := run(r, ctx, mcpRow("stdio:nope", "x"), "", nil); out.Fail == nil || out.Fail.Code != "unknown_server" {
		t.Fatalf("unknown server: %s", out.Result)
	}
}
