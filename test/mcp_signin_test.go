package test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// signInServer is a Go SDK MCP server on loopback that lets people in only
// through its authorization server: a 401 naming its protected resource
// metadata (RFC 9728), and tokens checked at the authorization server's
// introspection endpoint, which must be for this server (their aud). Its
// tool whoami answers the signed-in account; it keeps every token it took.
type signInServer struct {
	*httptest.Server
	resource string
	issuer   atomic.Pointer[string]
	mu       sync.Mutex
	tokens   []string
}

func newSignInServer(t *testing.T, secret string) *signInServer {
	s := &signInServer{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "signin", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "whoami", Description: "Says who signed in.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you are " + req.Extra.TokenInfo.UserID}}}, nil
		})
	verify := func(ctx context.Context, token string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		form := url.Values{"token": {token}}
		req, _ := http.NewRequestWithContext(ctx, "POST", *s.issuer.Load()+"/token/introspection", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("rowcall", secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		var got struct {
			Active bool
			Sub    string
			Aud    any
			Scope  string
			Exp    int64
		}
		if json.NewDecoder(res.Body).Decode(&got); !got.Active || fmt.Sprint(got.Aud) != s.resource {
			return nil, sdkauth.ErrInvalidToken
		}
		s.mu.Lock()
		s.tokens = append(s.tokens, token)
		s.mu.Unlock()
		return &sdkauth.TokenInfo{UserID: got.Sub, Scopes: strings.Fields(got.Scope), Expiration: time.Unix(got.Exp, 0)}, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{Resource: s.resource,
			AuthorizationServers: []string{*s.issuer.Load()}, ScopesSupported: []string{"tools"}}).ServeHTTP(w, r)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	s.resource = s.URL + "/mcp"
	mux.Handle("/mcp", sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{
		ResourceMetadataURL: s.URL + "/.well-known/oauth-protected-resource/mcp", Scopes: []string{"tools"}})(
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
	return s
}

func (s *signInServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tokens)
}

// Importing an MCP server that needs a person's sign-in: the import
// registers the host at the server's authorization server (a real one,
// oidc-provider, with dynamic registration and resource indicators) and
// answers connection_required with the link, writing nothing (`rowcall
// import mcp` prints the link); the owner signs in there once; the import
// made again makes the rows, with
// bearer:connection:<the registered provider>; a call answers the tool's
// result for the signed-in account, and its receipt confirms; when the
// access token nears its expiry the next call uses a refreshed one. A
// server whose resource metadata is another server's is refused, and
// nothing is registered or written.
func TestMCPImportSignIn(t *testing.T) {
	port := freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	const secret = "introspection-secret-8c1f"
	const ttl = 8 // seconds an access token lives
	up := newSignInServer(t, secret)
	issuer := oidcProvider(t, base+"/connect/callback", secret, ttl, "MCP_RESOURCE="+up.resource)
	up.issuer.Store(&issuer)
	key := make([]byte, 32)
	rand.Read(key)
	h := startHost(t, append([]string{"--addr", "127.0.0.1:" + strconv.Itoa(port)}, allowLoopback...),
		"ROWCALL_CONNECTIONS_KEY=k1:"+base64.StdEncoding.EncodeToString(key))
	provider := "mcp-127-0-0-1-" + strings.TrimPrefix(up.URL, "http://127.0.0.1:")
	path := "/api/import/mcp?" + url.Values{"server": {up.resource}, "prefix": {"SI_"}}.Encode()

	// A server whose metadata is for another resource is refused, with
	// nothing registered and nothing written.
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			json.NewEncoder(w).Encode(map[string]any{"resource": up.resource, "authorization_servers": []string{issuer}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer foreign.Close()
	got := h.do(t, req{Method: "POST", Path: "/api/import/mcp?" + url.Values{"server": {foreign.URL + "/mcp"}, "prefix": {"SF_"}}.Encode(), Body: map[string]any{}})
	expect(t, got, 502, map[string]any{"error": "invalid_request", "state_changed": false})
	if !strings.Contains(fmt.Sprint(got.JSON["message"]), "protected resource metadata") {
		t.Fatalf("foreign metadata: %s", got.Raw)
	}

	got = h.do(t, req{Method: "POST", Path: path, Body: map[string]any{}})
	expect(t, got, 409, map[string]any{"error": "connection_required:" + provider, "provider": provider,
		"auth": "bearer:connection:" + provider, "state_changed": false})
	link, _ := got.JSON["connect_url"].(string)
	if !strings.HasPrefix(link, base+"/connect?c=") {
		t.Fatalf("no link to sign in: %s", got.Raw)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/SI_WHOAMI"}), 404, nil)
	// `rowcall import mcp`, before the sign-in: the same provider, and the
	// link printed for the person; after it, the rows.
	cli := func() (string, error) {
		out, err := exec.Command(binary, "import", "mcp", up.resource, "--prefix", "SI_", "--url", h.URL, "--data", h.Data).CombinedOutput()
		return string(out), err
	}
	out, err := cli()
	if link = linkIn.FindString(out); err == nil || !strings.Contains(out, "needs a person's sign-in (connection_required:"+provider+")") ||
		!strings.Contains(out, "bearer:connection:"+provider) || !strings.HasPrefix(link, base+"/connect?c=") {
		t.Fatalf("rowcall import mcp before the sign-in (%v): %s", err, out)
	}

	connectAs(t, link, "alice")
	if out, err := cli(); err != nil || !strings.Contains(out, "created 1, updated 0, unchanged 0") {
		t.Fatalf("rowcall import mcp after the sign-in (%v): %s", err, out)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/SI_WHOAMI"}), 200, map[string]any{"runner": "mcp",
		"target": "MCP " + up.resource + "#whoami", "auth": "bearer:connection:" + provider, "imported_from": "mcp:" + up.resource})

	got = dispatchCall(t, h, "SI_WHOAMI", "")
	expect(t, got, 200, map[string]any{"ok": true, "ran": true, "result": "you are alice"})
	id := proof(t, got)["invocation_id"].(string)
	expect(t, h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + id, NoAuth: true}), 200,
		map[string]any{"confirmed": true, "status": "PROVEN_MATERIAL_RESULT"})

	// Refresh, as for any connection: once the access token nears its
	// expiry, the next call carries a fresh one for the same account.
	conns, _ := h.do(t, req{Method: "GET", Path: "/api/connections"}).JSON["connections"].([]any)
	if len(conns) != 1 || conns[0].(map[string]any)["provider"] != provider || conns[0].(map[string]any)["holder"] != "owner" {
		t.Fatalf("connections: %v", conns)
	}
	before := up.seen() // every request of a session carries the token
	exp, err := time.Parse(time.RFC3339Nano, conns[0].(map[string]any)["expires_at"].(string))
	if err != nil {
		t.Fatalf("expires_at: %v", conns)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(exp.Add(-4 * time.Second)); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the access token did not near its expiry")
		}
	}
	expect(t, dispatchCall(t, h, "SI_WHOAMI", ""), 200, map[string]any{"ok": true, "result": "you are alice"})
	if s := up.seen(); len(s) <= len(before) || slices.Contains(before, s[len(s)-1]) {
		t.Fatal("an expiring access token was sent again, not refreshed")
	}
}
