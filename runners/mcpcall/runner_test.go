package mcpcall

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

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

// authServer is a loopback OAuth authorization server (RFC 8414 metadata
// and a client-credentials token endpoint) that records every request.
type authServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
	form []string
}

func newAuthServer(t *testing.T) *authServer {
	a := &authServer{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a.mu.Lock()
		a.seen = append(a.seen, r)
		a.form = append(a.form, r.PostForm.Encode())
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{"issuer": a.URL, "token_endpoint": a.URL + "/token",
				"grant_types_supported": []string{"client_credentials"}, "code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
		case "/token":
			if id, secret, _ := r.BasicAuth(); id != "cid" || secret != "csecret" || r.PostForm.Get("grant_type") != "client_credentials" {
				w.WriteHeader(401)
				w.Write([]byte(`{"error":"invalid_client"}`))
				return
			}
			w.Write([]byte(`{"access_token":"tok-1","token_type":"Bearer","expires_in":3600}`))
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *authServer) requests() (paths []string, authz []string, forms []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.seen {
		paths = append(paths, r.URL.Path)
		authz = append(authz, r.Header.Get("Authorization"))
	}
	return paths, authz, append([]string(nil), a.form...)
}

// protected puts the fault server behind a bearer check that answers 401
// with the MCP authorization spec's challenge, and serves the protected
// resource metadata naming as (whose resource is resource, or the server's
// /mcp URL when empty).
func protected(t *testing.T, as *authServer, resource string) (*upstream, *[]string) {
	up := newUpstream(t, "127.0.0.1:0")
	inner := *up.handler.Load()
	var mu sync.Mutex
	var seen []string
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			res := resource
			if res == "" {
				res = up.URL + "/mcp"
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": res, "authorization_servers": []string{as.URL}})
			return
		}
		if r.Header.Get("Authorization") != "Bearer tok-1" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+up.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(401)
			return
		}
		inner.ServeHTTP(w, r)
	})
	up.handler.Store(&h)
	return up, &seen
}

// discovering is a runner allowed to reach both servers and a row on up
// whose auth column is oauth: without token_url.
func discovering(t *testing.T, up *upstream, as *authServer) (*Runner, *rowcall.Row) {
	r := newRunner(allowing(t, up.Server, as.Server), Config{})
	t.Cleanup(r.Close)
	row := mcpRow(up.URL+"/mcp", "echo")
	row.Auth = `oauth:{"client_id":"$CID","client_secret":"$CSECRET"}`
	return r, row
}

var clientCredentials = env("CID", "cid", "CSECRET", "csecret")

// An oauth: column without token_url reaches an MCP server by the MCP
// authorization spec: the server's 401 names its protected resource
// metadata, which names the authorization server, whose metadata names the
// token endpoint. The client secret goes only to that token endpoint, the
// token only to the MCP server's origin; the endpoint and the token are kept,
// so the next call discovers and asks nothing again.
func TestMCPOAuthDiscovery(t *testing.T) {
	as := newAuthServer(t)
	up, seen := protected(t, as, "")
	r, row := discovering(t, up, as)
	for i := range 2 {
		out := run(r, context.Background(), row, "hi", clientCredentials)
		if out.Failed() || !strings.Contains(out.Result, `"text":"hi"`) {
			t.Fatalf("call %d: %+v", i, out)
		}
	}
	paths, authz, forms := as.requests()
	if strings.Join(paths, ",") != "/.well-known/oauth-authorization-server,/token" {
		t.Errorf("authorization server saw %v, want its metadata and one token request", paths)
	}
	for i, a := range authz {
		if strings.Contains(a, "tok-1") || (paths[i] != "/token" && a != "") {
			t.Errorf("authorization server got Authorization %q on %s", a, paths[i])
		}
	}
	if !strings.Contains(forms[1], "grant_type=client_credentials") {
		t.Errorf("token request form = %q", forms[1])
	}
	prm := 0
	for _, s := range *seen {
		if strings.HasPrefix(s, "/.well-known/") {
			prm++
		}
		if strings.Contains(s, "csecret") || strings.Contains(s, "Basic") {
			t.Errorf("the MCP server saw the client's secret: %q", s)
		}
	}
	if prm != 1 {
		t.Errorf("protected resource metadata fetched %d times, want 1: %v", prm, *seen)
	}
}

// Metadata whose resource is another server's is not believed: the client
// secret is never sent, and the call fails with a code that says to write
// token_url.
func TestMCPOAuthDiscoveryRefusesForeignMetadata(t *testing.T) {
	as := newAuthServer(t)
	up, _ := protected(t, as, "https://elsewhere.example/mcp")
	r, row := discovering(t, up, as)
	out := run(r, context.Background(), row, "hi", clientCredentials)
	if !strings.HasPrefix(out.Result, "ERR:mcp:auth_discovery:") || !strings.Contains(out.Result, "token_url") {
		t.Fatalf("Result = %q", out.Result)
	}
	if paths, _, _ := as.requests(); len(paths) != 0 {
		t.Errorf("authorization server was asked %v", paths)
	}
}

// A row called while serving an MCP request (as rowcall's /mcp does) talks
// to its server in the version that server negotiated, not in the version
// of the request being served: a client that spoke 2026-07-28 to the outer
// server, a stateful upstream that speaks 2025-11-25.
func TestMCPCallInsideAnMCPRequest(t *testing.T) {
	up := newUpstream(t, "127.0.0.1:0")
	r := newRunner(allowing(t, up.Server), Config{})
	defer r.Close()
	outer := sdk.NewServer(&sdk.Implementation{Name: "outer", Version: "1"}, nil)
	outer.AddTool(&sdk.Tool{Name: "relay", InputSchema: object}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		out := run(r, ctx, mcpRow(up.URL+"/mcp", "echo"), "relayed|1", nil)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out.Result}}}, nil
	})
	front := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return outer },
		&sdk.StreamableHTTPOptions{Stateless: true}))
	defer front.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "caller", Version: "1"}, nil).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: front.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "relay", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*sdk.TextContent).Text; got != `{"n":1,"text":"relayed"}` {
		t.Errorf("relayed call = %s (outer session's protocol %s)", got, cs.InitializeResult().ProtocolVersion)
	}
}
