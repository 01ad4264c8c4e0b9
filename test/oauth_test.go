package test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/test/console"
)

// OAuth 2.1 sign-in at /mcp (api/oauth.go), driven over HTTP as a client
// drives it: discovery, registration, the authorization request, the
// owner's consent (the console's API call), the token request.

// callback is the redirect URI the tests' clients register: nothing listens
// there, the tests read the code from the redirect itself.
const callback = "http://127.0.0.1:9/callback"

// noFollow answers redirects instead of following them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// oauthClient is one registered public client and its PKCE verifier.
type oauthClient struct {
	h        *host
	id       string
	verifier string
	from     string // the address its requests come from (X-Forwarded-For), or "": loopback
}

func registerClient(t *testing.T, h *host, name string) *oauthClient {
	t.Helper()
	res := registerFrom(t, h, name, "")
	expect(t, res, http.StatusCreated, map[string]any{"client_name": name, "token_endpoint_auth_method": "none"})
	return &oauthClient{h: h, id: res.JSON["client_id"].(string), verifier: strings.Repeat("v", 20) + "-verifier-of-forty-three-characters"}
}

// registerFrom registers a client from the address from (X-Forwarded-For, to
// a host that trusts it), or from loopback ("").
func registerFrom(t *testing.T, h *host, name, from string) resp {
	t.Helper()
	var hdr map[string]string
	if from != "" {
		hdr = map[string]string{"X-Forwarded-For": from}
	}
	return h.do(t, req{Method: "POST", Path: "/oauth/register", NoAuth: true, Header: hdr,
		Body: map[string]any{"client_name": name, "redirect_uris": []string{callback}, "grant_types": []string{"authorization_code", "refresh_token"}}})
}

func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorize sends an authorization request with params over the defaults
// and returns the answer, redirects not followed.
func (c *oauthClient) authorize(t *testing.T, params map[string]string) *http.Response {
	t.Helper()
	v := url.Values{"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {callback}, "state": {"st-1"},
		"code_challenge": {challenge(c.verifier)}, "code_challenge_method": {"S256"}, "resource": {c.h.URL + "/mcp"}}
	for k, val := range params {
		if val == "" {
			v.Del(k)
		} else {
			v.Set(k, val)
		}
	}
	r, _ := http.NewRequest("GET", c.h.URL+"/oauth/authorize?"+v.Encode(), nil)
	if c.from != "" {
		r.Header.Set("X-Forwarded-For", c.from)
	}
	res, err := noFollow.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// consentID is the consent the authorization request's redirect opens in the console.
func consentID(t *testing.T, h *host, res *http.Response) string {
	t.Helper()
	loc := res.Header.Get("Location")
	id, ok := strings.CutPrefix(loc, h.URL+"/#/consent/")
	if res.StatusCode != http.StatusFound || !ok {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("authorize: %d Location %q, want the console's consent: %s", res.StatusCode, loc, body)
	}
	return id
}

// approve answers a consent as the console does (the owner key in a header)
// and returns the redirect's query.
func approve(t *testing.T, h *host, id string, scope map[string]any) url.Values {
	t.Helper()
	res := h.do(t, req{Method: "POST", Path: "/api/oauth/consent/" + id, Body: scope})
	expect(t, res, http.StatusOK, map[string]any{"ok": true})
	u, err := url.Parse(res.JSON["redirect"].(string))
	if err != nil || !strings.HasPrefix(u.String(), callback+"?") {
		t.Fatalf("redirect %v, want %s?…", res.JSON["redirect"], callback)
	}
	return u.Query()
}

// code runs the flow to a code.
func (c *oauthClient) code(t *testing.T) string {
	t.Helper()
	q := approve(t, c.h, consentID(t, c.h, c.authorize(t, nil)), map[string]any{"categories": []string{"*"}})
	if q.Get("state") != "st-1" || q.Get("iss") != c.h.URL || q.Get("code") == "" {
		t.Fatalf("authorization response %v: want code, state st-1 and iss %s (RFC 9207)", q, c.h.URL)
	}
	return q.Get("code")
}

// token posts a token request.
func (c *oauthClient) token(t *testing.T, form url.Values) resp {
	t.Helper()
	if !form.Has("client_id") {
		form.Set("client_id", c.id)
	}
	return c.h.do(t, req{Method: "POST", Path: "/oauth/token", NoAuth: true, Body: form.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
}

func (c *oauthClient) exchange(t *testing.T, code string) resp {
	t.Helper()
	return c.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback},
		"code_verifier": {c.verifier}, "resource": {c.h.URL + "/mcp"}})
}

// status is what a request with the bearer token gets from the API.
func status(t *testing.T, h *host, bearer string) int {
	t.Helper()
	return h.do(t, req{Method: "GET", Path: "/api/directory?limit=1", NoAuth: true, Header: map[string]string{"Authorization": "Bearer " + bearer}}).Status
}

func TestOAuthDiscovery(t *testing.T) {
	h := startHost(t, nil)
	res := h.do(t, req{Method: "POST", Path: "/mcp", NoAuth: true, Body: `{}`})
	want := `resource_metadata="` + h.URL + `/.well-known/oauth-protected-resource/mcp"`
	if res.Status != 401 || !strings.Contains(res.Header.Get("WWW-Authenticate"), want) {
		t.Fatalf("/mcp without a credential: %d %q, want 401 naming %s", res.Status, res.Header.Get("WWW-Authenticate"), want)
	}
	res = h.do(t, req{Method: "GET", Path: "/api/directory", NoAuth: true})
	if !strings.Contains(res.Header.Get("WWW-Authenticate"), `resource_metadata="`+h.URL+`/.well-known/oauth-protected-resource"`) {
		t.Fatalf("the API's 401 names no resource metadata: %q", res.Header.Get("WWW-Authenticate"))
	}
	for path, resource := range map[string]string{"/.well-known/oauth-protected-resource/mcp": h.URL + "/mcp", "/.well-known/oauth-protected-resource": h.URL} {
		var prm oauthex.ProtectedResourceMetadata
		getJSON(t, h.URL+path, &prm)
		if prm.Resource != resource || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != h.URL {
			t.Fatalf("%s: %+v", path, prm)
		}
	}
	pre, err := http.DefaultClient.Do(must(http.NewRequest("OPTIONS", h.URL+"/oauth/register", nil)))
	if err != nil || pre.StatusCode != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("a browser client's preflight of registration: %v %v", pre, err) // the MCP Inspector registers from the page
	}
	pre.Body.Close()
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		var asm oauthex.AuthServerMeta
		getJSON(t, h.URL+path, &asm)
		if asm.Issuer != h.URL || asm.TokenEndpoint != h.URL+"/oauth/token" || strings.Join(asm.CodeChallengeMethodsSupported, ",") != "S256" ||
			!asm.AuthorizationResponseIssParameterSupported || !asm.ClientIDMetadataDocumentSupported || asm.RegistrationEndpoint == "" {
			t.Fatalf("%s: %+v", path, asm)
		}
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(v) != nil {
		t.Fatalf("GET %s: %d", u, res.StatusCode)
	}
}

// TestOAuthGoSDKClient: the official Go SDK client, given no credential,
// signs in on its own (discovery, registration, PKCE, resource, iss) with
// the consent answered as the console answers it, then lists and calls
// tools; revoking its token in the token list stops it.
func TestOAuthGoSDKClient(t *testing.T) {
	h := startHost(t, allowLoopback)
	mcpRows(t, h)
	consents := 0
	var revoked atomic.Bool // once the person revoked the token, they approve no new sign-in
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Go SDK test client", RedirectURIs: []string{callback}, GrantTypes: []string{"authorization_code", "refresh_token"}}},
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if revoked.Load() {
				return nil, errors.New("the person does not approve a new sign-in")
			}
			consents++
			res, err := noFollow.Get(args.URL)
			if err != nil {
				return nil, err
			}
			res.Body.Close()
			q := approve(t, h, consentID(t, h, res), map[string]any{"keys": []string{"ZZ_TEST_TEMPERATURE"}, "rate": "100/minute"})
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "oauth-test", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: h.URL + "/mcp", OAuthHandler: handler, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect with OAuth: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "ZZ_TEST_TEMPERATURE") || strings.Contains(strings.Join(names, " "), "WEATHER_TYPED") {
		t.Fatalf("tools %v: want the consented scope (ZZ_TEST_TEMPERATURE, not WEATHER_TYPED)", names)
	}
	call, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZZ_TEST_TEMPERATURE", Arguments: map[string]any{"args": "52.52|13.41"}})
	if err != nil || call.IsError {
		t.Fatalf("call: %v %+v", err, call)
	}
	list := h.do(t, req{Method: "GET", Path: "/api/tokens"})
	toks := list.JSON["tokens"].([]any)
	if len(toks) != 1 || !strings.HasPrefix(toks[0].(map[string]any)["client"].(string), "oc_") || toks[0].(map[string]any)["name"] != "Go SDK test client" {
		t.Fatalf("token list %s: want one token held by the client", list.Raw)
	}
	if consents != 1 {
		t.Fatalf("%d consents, want 1", consents)
	}
	revoked.Store(true)
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/tokens/" + toks[0].(map[string]any)["id"].(string)}), 200, nil)
	// The revoked token is refused, and so is its refresh token: the client
	// gets in again only through a new consent, which is not given.
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZZ_TEST_TEMPERATURE", Arguments: map[string]any{"args": "52.52|13.41"}}); err == nil {
		t.Fatal("a call after the token was revoked succeeded")
	}
}

func TestOAuthSecurity(t *testing.T) {
	h := startHost(t, nil)
	c := registerClient(t, h, "Test Client")

	// Errors before the client and redirect_uri are known good are shown,
	// never redirected (no open redirect); after, they go back with state.
	t.Run("exact redirect and no open redirect", func(t *testing.T) {
		for _, p := range []map[string]string{
			{"redirect_uri": callback + "/"}, {"redirect_uri": callback + "?x=1"}, {"redirect_uri": "https://evil.example/callback"},
			{"redirect_uri": strings.Replace(callback, "127.0.0.1", "localhost", 1)},
			{"client_id": "oc_unknown", "redirect_uri": "https://evil.example/"}, {"client_id": ""},
		} {
			res := c.authorize(t, p)
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != 400 || res.Header.Get("Location") != "" || !strings.Contains(res.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("%v: %d Location %q, want a 400 page and no redirect", p, res.StatusCode, res.Header.Get("Location"))
			}
			if strings.Contains(string(body), "<script") {
				t.Fatalf("%v: the page runs script: %s", p, body)
			}
		}
	})
	t.Run("PKCE required", func(t *testing.T) {
		for _, p := range []map[string]string{{"code_challenge": ""}, {"code_challenge_method": "plain"}, {"code_challenge_method": ""}} {
			res := c.authorize(t, p)
			u, _ := url.Parse(res.Header.Get("Location"))
			if res.StatusCode != 302 || !strings.HasPrefix(u.String(), callback+"?") || u.Query().Get("error") != "invalid_request" ||
				u.Query().Get("state") != "st-1" || u.Query().Get("iss") != h.URL {
				t.Fatalf("%v: %d %s, want the client's redirect with error=invalid_request, state and iss", p, res.StatusCode, u)
			}
		}
	})
	t.Run("PKCE checked", func(t *testing.T) {
		code := c.code(t)
		wrong := *c
		wrong.verifier = strings.Repeat("w", 43)
		expect(t, wrong.exchange(t, code), 400, map[string]any{"error": "invalid_grant"})
		expect(t, c.exchange(t, code), 400, map[string]any{"error": "invalid_grant"}) // the code was spent on the wrong try
	})
	t.Run("code used twice", func(t *testing.T) {
		code := c.code(t)
		first := c.exchange(t, code)
		expect(t, first, 200, map[string]any{"token_type": "Bearer"})
		access, refresh := first.JSON["access_token"].(string), first.JSON["refresh_token"].(string)
		if !strings.HasPrefix(access, "rct_") || status(t, h, access) != 200 {
			t.Fatalf("access token %q is not a working capability token", access)
		}
		expect(t, c.exchange(t, code), 400, map[string]any{"error": "invalid_grant"})
		if s := status(t, h, access); s != 401 {
			t.Fatalf("the token of a code used twice answers %d, want 401 (revoked)", s)
		}
		expect(t, c.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}), 400, map[string]any{"error": "invalid_grant"})
	})
	t.Run("another client or redirect", func(t *testing.T) {
		other := registerClient(t, h, "Other")
		code := c.code(t)
		expect(t, other.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback}, "code_verifier": {c.verifier}}),
			400, map[string]any{"error": "invalid_grant"})
	})
	t.Run("audience", func(t *testing.T) {
		res := c.authorize(t, map[string]string{"resource": "https://other.example/mcp"})
		u, _ := url.Parse(res.Header.Get("Location"))
		if u.Query().Get("error") != "invalid_target" {
			t.Fatalf("authorize for another resource: %d %s, want error=invalid_target", res.StatusCode, u)
		}
		code := c.code(t)
		expect(t, c.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {callback},
			"code_verifier": {c.verifier}, "resource": {"https://other.example/mcp"}}), 400, map[string]any{"error": "invalid_target"})
		staging, _, _ := mint(t, h, map[string]any{"categories": []string{"*"}, "audience": "staging"})
		res2 := h.do(t, req{Method: "POST", Path: "/mcp", NoAuth: true, Body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
			Header: map[string]string{"Authorization": "Bearer " + staging, "Accept": "application/json, text/event-stream"}})
		if res2.Status != 401 {
			t.Fatalf("/mcp with a token for audience staging: %d, want 401", res2.Status)
		}
	})
	t.Run("refresh replay revokes the family", func(t *testing.T) {
		first := c.exchange(t, c.code(t))
		expect(t, first, 200, nil)
		refresh := func(rt string) resp {
			return c.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
		}
		second := refresh(first.JSON["refresh_token"].(string))
		expect(t, second, 200, nil)
		if status(t, h, first.JSON["access_token"].(string)) != 200 || status(t, h, second.JSON["access_token"].(string)) != 200 {
			t.Fatal("the access token a refresh replaced stopped within the grace")
		}
		passRefreshGrace(t, h.db(t))
		if status(t, h, first.JSON["access_token"].(string)) != 401 || status(t, h, second.JSON["access_token"].(string)) != 200 {
			t.Fatal("refresh did not rotate the access token")
		}
		expect(t, refresh(first.JSON["refresh_token"].(string)), 400, map[string]any{"error": "invalid_grant"})
		if s := status(t, h, second.JSON["access_token"].(string)); s != 401 {
			t.Fatalf("after a replayed refresh token the newest access token answers %d, want 401", s)
		}
		expect(t, refresh(second.JSON["refresh_token"].(string)), 400, map[string]any{"error": "invalid_grant"})
	})
	t.Run("revocation", func(t *testing.T) {
		tok := c.exchange(t, c.code(t))
		access := tok.JSON["access_token"].(string)
		revoke := func(client string) {
			res := h.do(t, req{Method: "POST", Path: "/oauth/revoke", NoAuth: true, Body: url.Values{"token": {access}, "client_id": {client}}.Encode(),
				Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
			expect(t, res, 200, nil)
		}
		revoke("oc_someone_else")
		if status(t, h, access) != 200 {
			t.Fatal("another client revoked the token")
		}
		revoke(c.id)
		if status(t, h, access) != 401 {
			t.Fatal("the client's revocation did not revoke the token")
		}
	})
	t.Run("consent not forgeable", func(t *testing.T) {
		id := consentID(t, h, c.authorize(t, nil))
		scope := `{"categories":["*"]}`
		// A cross-site form or fetch carries cookies at most, never the header.
		for _, hd := range []map[string]string{
			{"Cookie": "rowcall=" + h.Key, "Content-Type": "text/plain"},
			{"Cookie": "rowcall.secret=" + h.Key, "Origin": "https://evil.example"},
		} {
			res := h.do(t, req{Method: "POST", Path: "/api/oauth/consent/" + id, NoAuth: true, Body: scope, Header: hd})
			if res.Status != 401 {
				t.Fatalf("consent without the owner key header: %d, want 401", res.Status)
			}
		}
		expect(t, h.do(t, req{Method: "POST", Path: "/api/oauth/consent/ocr_guessed", Body: scope}), 404, nil)
		approve(t, h, id, map[string]any{"categories": []string{"*"}})
		expect(t, h.do(t, req{Method: "POST", Path: "/api/oauth/consent/" + id, Body: scope}), 404, nil)
		deny := consentID(t, h, c.authorize(t, nil))
		res := h.do(t, req{Method: "POST", Path: "/api/oauth/consent/" + deny + "/deny"})
		if u, _ := url.Parse(res.JSON["redirect"].(string)); u.Query().Get("error") != "access_denied" || u.Query().Get("state") != "st-1" {
			t.Fatalf("deny: %s", res.Raw)
		}
	})
}

// TestOAuthLoopbackAnyPort: a native client registers an http loopback
// redirect URI and signs in on whatever port it was given (RFC 8252 §7.3);
// everything but the port still matches exactly.
func TestOAuthLoopbackAnyPort(t *testing.T) {
	h := startHost(t, nil)
	codes := make(chan url.Values, 1)
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query()
		io.WriteString(w, "signed in")
	}))
	t.Cleanup(listener.Close)
	port := listener.URL[strings.LastIndex(listener.URL, ":")+1:]
	res := h.do(t, req{Method: "POST", Path: "/oauth/register", NoAuth: true, Body: map[string]any{"client_name": "Native",
		"redirect_uris": []string{"http://127.0.0.1/callback", "http://127.0.0.1:1234/cb", "http://[::1]/cb", "http://localhost:8080/cb", "https://app.example/cb"}}})
	expect(t, res, http.StatusCreated, nil)
	c := &oauthClient{h: h, id: res.JSON["client_id"].(string), verifier: strings.Repeat("v", 20) + "-verifier-of-forty-three-characters"}

	// The client listens on a random port and receives its code there.
	redirect := "http://127.0.0.1:" + port + "/callback"
	res = h.do(t, req{Method: "POST", Path: "/api/oauth/consent/" + consentID(t, h, c.authorize(t, map[string]string{"redirect_uri": redirect})),
		Body: map[string]any{"categories": []string{"*"}}})
	expect(t, res, http.StatusOK, map[string]any{"ok": true})
	back := res.JSON["redirect"].(string)
	if !strings.HasPrefix(back, redirect+"?") {
		t.Fatalf("redirect %s, want %s?…", back, redirect)
	}
	got, err := http.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	got.Body.Close()
	code := (<-codes).Get("code")
	tok := c.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"code_verifier": {c.verifier}, "resource": {h.URL + "/mcp"}})
	expect(t, tok, 200, map[string]any{"token_type": "Bearer"})
	if s := status(t, h, tok.JSON["access_token"].(string)); s != 200 {
		t.Fatalf("the loopback client's access token answers %d", s)
	}
	for _, ok := range []string{"http://127.0.0.1:5555/cb", "http://[::1]:" + port + "/cb", "http://localhost:" + port + "/cb", "http://localhost/cb"} {
		consentID(t, h, c.authorize(t, map[string]string{"redirect_uri": ok}))
	}
	for _, bad := range []string{"http://127.0.0.1:" + port + "/other", "http://127.0.0.1:" + port + "/callback/", "http://127.0.0.1:" + port + "/callback?x=1",
		"http://localhost:" + port + "/callback", "http://[::1]:" + port + "/callback", "http://127.0.0.1:0/callback", "http://127.0.0.1:99999/callback",
		"http://127.0.0.1:0" + port + "/callback", "https://127.0.0.1:" + port + "/callback", "https://app.example:8443/cb", "http://127.0.0.2:" + port + "/callback",
		"http://user@127.0.0.1:" + port + "/callback"} {
		res := c.authorize(t, map[string]string{"redirect_uri": bad})
		if res.StatusCode != 400 || res.Header.Get("Location") != "" {
			t.Fatalf("redirect_uri %s: %d Location %q, want a 400 page and no redirect", bad, res.StatusCode, res.Header.Get("Location"))
		}
	}
}

// TestOAuthRegistrationBounded: registration refuses what it cannot bound
// (size, redirect URIs, a long name, confidential clients), keeps to its
// rate, of which one address has a share, and forgets a client no one signed
// in with after a day.
func TestOAuthRegistrationBounded(t *testing.T) {
	h := startHost(t, nil, "ROWCALL_TRUST_FORWARDED=1")
	register := func(body any) resp {
		return h.do(t, req{Method: "POST", Path: "/oauth/register", NoAuth: true, Body: body})
	}
	if res := register(`{"redirect_uris":["` + strings.Repeat("a", 17<<10) + `"]}`); res.Status != 413 || res.JSON["error"] != "too_large" {
		t.Fatalf("registration of 17 KiB: %d %s, want 413 too_large", res.Status, res.Raw)
	}
	for _, body := range []any{
		map[string]any{"redirect_uris": []string{"javascript:alert(1)//"}},
		map[string]any{"redirect_uris": []string{"http://evil.example/cb"}},
		map[string]any{"redirect_uris": []string{"https://ok.example/cb#frag"}},
		map[string]any{"redirect_uris": []string{}},
		map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "token_endpoint_auth_method": "client_secret_basic"},
		map[string]any{"redirect_uris": []string{"https://ok.example/" + strings.Repeat("a", 1024)}},
		map[string]any{"redirect_uris": []string{"https://ok.example/cb"}, "client_name": strings.Repeat("n", 121)},
	} {
		if res := register(body); res.Status != 400 || res.JSON["error_description"] == nil {
			t.Fatalf("registration %v: %d %.300s, want 400 with error_description", body, res.Status, res.Raw)
		}
	}
	first := registerClient(t, h, "first")
	// A code never redeemed: its token is revoked once the code is an hour
	// past its expiry (at the next authorization request).
	approved := approve(t, h, consentID(t, h, first.authorize(t, nil)), map[string]any{"categories": []string{"*"}})
	if _, err := h.db(t).Exec(`UPDATE oauth_codes SET expires_at = '2000-01-01T00:00:00.000Z'`); err != nil || approved.Get("code") == "" {
		t.Fatal(err)
	}
	consentID(t, h, first.authorize(t, nil))
	toks := h.do(t, req{Method: "GET", Path: "/api/tokens"}).JSON["tokens"].([]any)
	if len(toks) != 1 || toks[0].(map[string]any)["revoked_at"] == nil {
		t.Fatalf("the token of a code never redeemed: %v, want revoked", toks)
	}
	// One address registers at most 3 clients a minute; others still can.
	for i := range 3 {
		expect(t, registerFrom(t, h, "flood", "203.0.113.7"), http.StatusCreated, nil)
		if i == 2 {
			res := registerFrom(t, h, "flood", "203.0.113.7")
			if res.Status != 429 || res.Header.Get("Retry-After") == "" || !strings.Contains(fmt.Sprint(res.JSON["error_description"]), "3 from one address") {
				t.Fatalf("a 4th registration from one address in a minute: %d %s, want 429 saying 3 from one address", res.Status, res.Raw)
			}
		}
	}
	// The whole server: 10 a minute (4 so far).
	var unused *oauthClient
	for i := range 6 {
		res := registerFrom(t, h, "more", fmt.Sprintf("198.51.100.%d", i))
		expect(t, res, http.StatusCreated, nil)
		unused = &oauthClient{h: h, id: res.JSON["client_id"].(string)}
	}
	res := registerFrom(t, h, "more", "198.51.100.99")
	if res.Status != 429 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("the 11th registration in a minute: %d %s, want 429 with Retry-After", res.Status, res.Raw)
	}
	// A day later, clients no one signed in with are gone (the next
	// registration forgets them).
	db := h.db(t)
	if _, err := db.Exec(`UPDATE oauth_clients SET created_at = '2000-01-01T00:00:00.000Z'`); err != nil {
		t.Fatal(err)
	}
	registerClient(t, h, "next day")
	if res := unused.authorize(t, nil); res.StatusCode != 400 {
		t.Fatalf("an expired client's authorization request: %d, want 400", res.StatusCode)
	}
}

// TestOAuthConsentShares: authorization requests waiting for consent are
// 200 in all, of which one client holds at most 10 and one address at most
// 10, so one client or one address cannot lock everyone else out of signing
// in; a request whose state or scope is over 1024 bytes goes back to the
// client as invalid_request and stores nothing; an expired request is
// deleted, not kept.
func TestOAuthConsentShares(t *testing.T) {
	h := startHost(t, nil, "ROWCALL_TRUST_FORWARDED=1")
	db := h.db(t)
	stored := func() (n int) {
		t.Helper()
		if err := db.QueryRow(`SELECT COUNT(*) FROM oauth_requests`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	refused := func(res *http.Response, what string) {
		t.Helper()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Location") != "" || !strings.Contains(string(body), "10 for one client and 10 from one address") {
			t.Fatalf("%s: %d Location %q, want 429 naming the shares: %s", what, res.StatusCode, res.Header.Get("Location"), body)
		}
	}
	a, b := registerClient(t, h, "A"), registerClient(t, h, "B")
	// One client, from ten addresses: its eleventh waiting request is refused;
	// another client still starts a sign-in.
	for i := range 10 {
		a.from = fmt.Sprintf("192.0.2.%d", i)
		consentID(t, h, a.authorize(t, nil))
	}
	a.from = "192.0.2.200"
	refused(a.authorize(t, nil), "client A's 11th waiting request")
	b.from = "192.0.2.200"
	consentID(t, h, b.authorize(t, nil))

	// One address, for two clients: its eleventh is refused; another
	// address still starts one for the same client.
	c, reg := registerClient(t, h, "C"), registerFrom(t, h, "D", "198.51.100.1")
	expect(t, reg, http.StatusCreated, nil)
	d := &oauthClient{h: h, id: reg.JSON["client_id"].(string), verifier: c.verifier}
	c.from, d.from = "2001:db8:1:1::1", "2001:db8:1:1::2" // one /64
	for range 5 {
		consentID(t, h, c.authorize(t, nil))
		consentID(t, h, d.authorize(t, nil))
	}
	d.from = "2001:db8:1:1::3"
	refused(d.authorize(t, nil), "the 11th waiting request from one /64")
	d.from = "2001:db8:2::1"
	consentID(t, h, d.authorize(t, nil))

	refusesOverlong(t, d, stored)

	// Expired requests are deleted at the next request, and free their shares.
	if _, err := db.Exec(`UPDATE oauth_requests SET expires_at = '2000-01-01T00:00:00.000Z'`); err != nil {
		t.Fatal(err)
	}
	a.from = "192.0.2.200"
	consentID(t, h, a.authorize(t, nil))
	if n := stored(); n != 1 {
		t.Fatalf("%d authorization requests stored, want the new one alone (the expired deleted)", n)
	}
}

// refusesOverlong: an authorization request whose state or scope is over
// 1024 bytes goes back to the client as invalid_request, without the state,
// and leaves stored (the requests stored) as it was.
func refusesOverlong(t *testing.T, d *oauthClient, stored func() int) {
	t.Helper()
	before := stored()
	for _, p := range []map[string]string{{"state": strings.Repeat("s", 1025)}, {"scope": strings.Repeat("x ", 513)}} {
		res := d.authorize(t, p)
		loc, _ := url.Parse(res.Header.Get("Location"))
		q := loc.Query()
		if res.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), callback+"?") || q.Get("error") != "invalid_request" ||
			!strings.Contains(q.Get("error_description"), "at most 1024") || len(q.Get("state")) > 1024 {
			t.Fatalf("authorization request with %d bytes in %.40v: %d %s, want invalid_request back to the client", len(p["state"])+len(p["scope"]), p, res.StatusCode, loc)
		}
	}
	if after := stored(); after != before {
		t.Fatalf("refused requests stored: %d requests, were %d", after, before)
	}
}

// TestOAuthMetadataDocument: a client named by the https URL of its client
// ID metadata document, fetched through the host's outbound policy (here
// allowed to reach the loopback document server with --allow-outbound).
func TestOAuthMetadataDocument(t *testing.T) {
	var docURL string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "client_name": "Document Client", "redirect_uris": []string{callback}})
	}))
	defer srv.Close()
	docURL = srv.URL + "/client.json"
	certs := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(certs, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	h := startHost(t, []string{"--allow-outbound", "127.0.0.1/32"}, "SSL_CERT_FILE="+certs)
	c := &oauthClient{h: h, id: docURL, verifier: strings.Repeat("d", 43)}
	id := consentID(t, h, c.authorize(t, nil))
	got := h.do(t, req{Method: "GET", Path: "/api/oauth/consent/" + id})
	expect(t, got, 200, map[string]any{"client_name": "Document Client", "client_id": docURL, "redirect_uri": callback})
	code := approve(t, h, id, map[string]any{"categories": []string{"*"}}).Get("code")
	expect(t, c.exchange(t, code), 200, map[string]any{"token_type": "Bearer"})
	if res := c.authorize(t, map[string]string{"redirect_uri": "http://127.0.0.1:9/other"}); res.StatusCode != 400 {
		t.Fatalf("a redirect the document does not list: %d, want 400", res.StatusCode)
	}
}

// TestOAuthConsoleConsent: the consent as a person gives it, in headless
// Chromium: the client's authorization URL opens the console, which asks for
// the owner key, shows the client and where the browser goes next, and on
// approval sends the browser to the client's redirect with a code that
// redeems for a working token; the token list names the client.
func TestOAuthConsoleConsent(t *testing.T) {
	h := startHost(t, nil)
	ctx := browser(t, console.Laptop)
	c := newBrowserClient(t, h, "Browser Client", "st-b")
	run(t, ctx, chromedp.Navigate(h.URL+"/oauth/authorize?"+c.query.Encode()), console.Ready, console.SignInHere(h.Key),
		console.Wait(`!!document.getElementById('consent-client')`))
	if got := textOf(t, ctx, "#consent-client"); got != "Browser Client" {
		t.Fatalf("the consent names %q", got)
	}
	if got := textOf(t, ctx, "#consent-redirect"); got != c.redirect {
		t.Fatalf("the consent shows the redirect %q", got)
	}
	run(t, ctx, console.Fill("#c_categories", "*"), console.Click("#consent-approve"))
	q := c.callback(t, ctx)
	if q.Get("state") != "st-b" || q.Get("iss") != h.URL {
		t.Fatalf("the client received %v", q)
	}
	tok := c.redeem(t, q)
	if status(t, h, tok.JSON["access_token"].(string)) != 200 {
		t.Fatal("the token the console's consent minted does not work")
	}
	run(t, ctx, chromedp.Navigate(h.URL+"/#/tokens"), console.Ready)
	if got := textOf(t, ctx, "#tokens td.client"); got != c.id {
		t.Fatalf("the token list shows the client %q, want %s", got, c.id)
	}
}

// browserClient is a client registered with a callback on loopback that a
// browser reaches at the end of the console's consent.
type browserClient struct {
	*oauthClient
	redirect string          // its redirect URI
	query    url.Values      // its authorization request's query
	codes    chan url.Values // the query each browser brings to its callback
}

func newBrowserClient(t *testing.T, h *host, name, state string) *browserClient {
	t.Helper()
	codes := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case codes <- r.URL.Query():
		default:
		}
		io.WriteString(w, "signed in")
	}))
	t.Cleanup(cb.Close)
	res := h.do(t, req{Method: "POST", Path: "/oauth/register", NoAuth: true,
		Body: map[string]any{"client_name": name, "redirect_uris": []string{cb.URL + "/callback"}}})
	expect(t, res, http.StatusCreated, nil)
	c := &browserClient{oauthClient: &oauthClient{h: h, id: res.JSON["client_id"].(string), verifier: strings.Repeat("b", 43)}, redirect: cb.URL + "/callback", codes: codes}
	c.query = url.Values{"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {c.redirect}, "state": {state},
		"code_challenge": {challenge(c.verifier)}, "code_challenge_method": {"S256"}}
	return c
}

// callback waits for the browser to reach the client's callback, and
// returns the query it brought.
func (c *browserClient) callback(t *testing.T, ctx context.Context) url.Values {
	t.Helper()
	select {
	case q := <-c.codes:
		return q
	case <-ctx.Done():
		t.Fatalf("the browser never reached the client's redirect; the page shows %q", textOf(t, ctx, "#view"))
		return nil
	}
}

// redeem exchanges the code of the callback's query q for the token.
func (c *browserClient) redeem(t *testing.T, q url.Values) resp {
	t.Helper()
	tok := c.token(t, url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {c.redirect}, "code_verifier": {c.verifier}})
	expect(t, tok, 200, nil)
	return tok
}

// suiteOAuth: the sign-in's storage on every host (the same sqlstore code
// on SQLite, sqld and D1): a client registers, a consent mints its token, a
// code is spent once, a refresh rotates and its replay revokes the grant.
func suiteOAuth(t *testing.T, tg *target) {
	h := tg.host
	c := registerClient(t, h, "Suite Client")
	code := c.code(t)
	first := c.exchange(t, code)
	expect(t, first, 200, map[string]any{"token_type": "Bearer"})
	expect(t, c.exchange(t, code), 400, map[string]any{"error": "invalid_grant"})
	if s := status(t, h, first.JSON["access_token"].(string)); s != 401 {
		t.Fatalf("the token of a code used twice answers %d, want 401", s)
	}
	refreshGrace(t, tg, c)
	// Lengths: a state or scope over 1024 bytes, a client_name over 120.
	refusesOverlong(t, c, func() (n int) {
		if err := tg.DB(t).QueryRow(`SELECT COUNT(*) FROM oauth_requests`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	})
	res := h.do(t, req{Method: "POST", Path: "/oauth/register", NoAuth: true, Body: map[string]any{"client_name": strings.Repeat("n", 121), "redirect_uris": []string{callback}}})
	expect(t, res, 400, map[string]any{"error": "invalid_client_metadata", "error_description": "client_name is 121 bytes; at most 120"})
}

// refreshGrace: a client open in two windows refreshes twice with one
// refresh token within the grace (a minute), and both windows stay signed
// in; the access token a refresh replaced works for the grace. A used
// refresh token after the grace, or one older than the last used, is a
// replay and revokes the grant.
func refreshGrace(t *testing.T, tg *target, c *oauthClient) {
	h := tg.host
	refresh := func(r resp) resp {
		t.Helper()
		return c.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.JSON["refresh_token"].(string)}})
	}
	works := func(want int, rs ...resp) {
		t.Helper()
		for i, r := range rs {
			if s := status(t, h, r.JSON["access_token"].(string)); s != want {
				t.Fatalf("access token %d of %d answers %d, want %d", i+1, len(rs), s, want)
			}
		}
	}
	tok := c.exchange(t, c.code(t))
	expect(t, tok, 200, nil)
	a := refresh(tok) // the first window
	expect(t, a, 200, map[string]any{"token_type": "Bearer"})
	works(200, a, tok) // the access token replaced is good for the grace
	b := refresh(tok)  // the second window, with the same refresh token
	expect(t, b, 200, map[string]any{"token_type": "Bearer"})
	works(200, a, b)
	a2, b2 := refresh(a), refresh(b) // each window goes on with its own
	expect(t, a2, 200, nil)
	expect(t, b2, 200, nil)
	works(200, a2, b2)

	// After the grace: the replaced access tokens stop, and the refresh
	// token used then is a replay that revokes the grant.
	passRefreshGrace(t, tg.DB(t))
	works(401, tok, a, b)
	works(200, b2)
	expect(t, refresh(b), 400, map[string]any{"error": "invalid_grant"})
	works(401, a2, b2)

	// An older refresh token than the last used is a replay even within the grace.
	tok = c.exchange(t, c.code(t))
	expect(t, tok, 200, nil)
	next := refresh(tok)
	expect(t, next, 200, nil)
	last := refresh(next)
	expect(t, last, 200, nil)
	works(200, last)
	expect(t, refresh(tok), 400, map[string]any{"error": "invalid_grant"})
	works(401, last)
}

// passRefreshGrace moves every refresh's stored times back past the grace
// (a minute), as a clock would.
func passRefreshGrace(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, stmt := range []string{`UPDATE oauth_refresh SET used_at = '2000-01-01T00:00:00.000Z' WHERE used_at IS NOT NULL`,
		`UPDATE tokens SET prev_until = '2000-01-01T00:00:00.000Z' WHERE prev_until IS NOT NULL`} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOAuthTypeScriptClient: the official TypeScript SDK client
// (test/mcpclient/oauth.mjs), given only the URL, signs in end to end —
// discovery, registration, PKCE — with the consent approved in the console
// in headless Chromium, lists and calls tools within the consented scope;
// revoking its token in the console's token list stops it.
func TestOAuthTypeScriptClient(t *testing.T) {
	dir := mcpClientDir(t)
	h := startHost(t, allowLoopback)
	mcpRows(t, h)
	ctx := browser(t, console.Laptop)
	cmd := exec.CommandContext(ctx, "node", "oauth.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCP_URL="+h.URL+"/mcp", "CALL_KEY=ZZ_TEST_TEMPERATURE", "CALL_ARGS=37.77|-122.42")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	events := nodeEvents(t, stdout, &stderr, func(name string, ev map[string]any) {
		switch name {
		case "authorize": // the client opens the browser
			run(t, ctx, chromedp.Navigate(ev["url"].(string)), console.Ready, console.SignInHere(h.Key),
				console.Wait(`!!document.getElementById('consent-client')`))
			if got := textOf(t, ctx, "#consent-client"); got != "rowcall TypeScript test client" {
				t.Fatalf("the consent names %q", got)
			}
			run(t, ctx, console.Fill("#c_categories", "tools"), console.Click("#consent-approve"))
		case "waiting": // revoke the client's token in the console
			toks := h.do(t, req{Method: "GET", Path: "/api/tokens"}).JSON["tokens"].([]any)
			id := toks[0].(map[string]any)["id"].(string)
			run(t, ctx, chromedp.Navigate(h.URL+"/#/tokens"), console.Ready,
				console.Click(`#tokens tr[data-token="`+id+`"] button`),
				console.Wait(`document.querySelector('#tokens tr[data-token="`+id+`"] .state').innerText.startsWith('revoked')`))
			io.WriteString(stdin, "revoked\n")
		}
	})
	if events["done"] == nil {
		t.Fatalf("node client did not finish: %v\n%s", events, stderr.String())
	}
	if r := events["redirected"]; r["state"] != "ts-state" || r["iss"] != h.URL {
		t.Fatalf("the authorization response %v: want state and iss %s", r, h.URL)
	}
	if tok := events["token"]; tok["prefix"] != "rct_" || tok["refresh"] != true {
		t.Fatalf("token %v: want a capability token and a refresh token", tok)
	}
	names := fmt.Sprint(events["tools"]["names"])
	if !strings.Contains(names, "ZZ_TEST_TEMPERATURE") || strings.Contains(names, "WEATHER_TYPED") {
		t.Fatalf("tools %s: want the consented category (tools) only", names)
	}
	if events["called"]["isError"] != false {
		t.Fatalf("call: %v", events["called"])
	}
	if events["after_revoke"]["ok"] != false {
		t.Fatalf("after the token was revoked in the console the client still calls: %v", events["after_revoke"])
	}
}

// nodeEvents reads the JSON lines a Node client prints, each an event named
// by its "event", calling on for each; an "error" event fails the test.
func nodeEvents(t *testing.T, stdout io.Reader, stderr *strings.Builder, on func(name string, ev map[string]any)) map[string]map[string]any {
	t.Helper()
	events := map[string]map[string]any{}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatalf("node said %s", lines.Text())
		}
		name, _ := ev["event"].(string)
		events[name] = ev
		if name == "error" {
			t.Fatalf("node client: %s\n%s", ev["message"], stderr.String())
		}
		on(name, ev)
	}
	return events
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestOAuthMCPInspector: the official MCP Inspector's CLI
// (test/mcpinspector, pinned), given only the URL, signs in as it would
// for a person — discovery, registration, PKCE, its own loopback callback —
// with the consent approved in the console in headless Chromium with the
// owner key; it then lists and calls tools with the stored sign-in, and
// once the token is revoked in the console's token list its next call is
// refused. TestPersonInBrowser runs the same sign-in consented by a person,
// on every host with a browser's session.
//
//	go test ./test -run 'TestOAuthMCPInspector'
func TestOAuthMCPInspector(t *testing.T) {
	dir := testenv.NPM(t, "mcpinspector", filepath.Join("node_modules", "@modelcontextprotocol", "inspector", "package.json"))
	tg := startEmbedded(t, nil)
	mcpRows(t, tg.host)
	ctx := browser(t, console.Laptop)
	inspectorSignIn(t, ctx, dir, tg, nil)
}

// inspectorSignIn runs the Inspector's sign-in, calls and revocation against
// tg in the browser ctx, and looks in its database for what the sign-in
// stored. The consent is the owner key's (person nil: the key is entered on
// the consent page), or that of the person whose session ctx holds: they
// are refused a scope past their own (tools), and the token they consent
// to names them, as do its calls' receipts.
func inspectorSignIn(t *testing.T, ctx context.Context, dir string, tg *target, person map[string]any) {
	h := tg.host
	home := t.TempDir()
	inspector := func(args ...string) *exec.Cmd {
		launcher := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
		cmd := exec.CommandContext(ctx, "node", append([]string{launcher, "--cli", h.URL + "/mcp"}, args...)...)
		// Interactive sign-in without a terminal; the "browser" it opens
		// does nothing: the test opens the URL it prints in Chromium.
		cmd.Env = append(os.Environ(), "HOME="+home, "MCP_AUTO_OPEN_ENABLED=true", "BROWSER=/bin/true", "MCP_INSPECTOR_SECRET_STORE=file", "NO_COLOR=1")
		return cmd
	}
	list := inspector("--method", "tools/list")
	var stdout, log strings.Builder
	list.Stdout = &stdout
	stderr, _ := list.StderrPipe()
	if err := list.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if u, ok := strings.CutPrefix(lines.Text(), "Please navigate to: "); ok {
			signIn := chromedp.Steps()
			if person == nil {
				signIn = console.SignInHere(h.Key)
			}
			run(t, ctx, chromedp.Navigate(strings.TrimSpace(u)), console.Ready, signIn,
				console.Wait(`!!document.getElementById('consent-client')`))
			if got := textOf(t, ctx, "#consent-redirect"); !strings.HasPrefix(got, "http://127.0.0.1:") {
				t.Fatalf("the consent shows the redirect %q", got)
			}
			if got := textOf(t, ctx, "#consent-client"); got != "MCP Inspector" {
				t.Fatalf("the consent names %q", got)
			}
			if person != nil { // a person grants at most their own scope
				run(t, ctx, console.Fill("#c_categories", "tools weather"), console.Click("#consent-approve"),
					console.Wait(`(document.getElementById('consent-error') || {}).innerText?.includes('reaches rows yours does not')`))
			}
			run(t, ctx, console.Fill("#c_categories", "tools"), console.Click("#consent-approve"))
		}
	}
	if err := list.Wait(); err != nil {
		t.Fatalf("inspector tools/list: %v\n%s\n%s", err, stdout.String(), log.String())
	}
	if got := stdout.String(); !strings.Contains(got, "ZZ_TEST_TEMPERATURE") || strings.Contains(got, "WEATHER_TYPED") {
		t.Fatalf("inspector tools/list: %.600s, want the consented category (tools) only", got)
	}
	callTool := func(key, args string) (string, error) {
		out, err := inspector("--method", "tools/call", "--tool-name", key, "--tool-arg", "args="+args, "--stored-auth-only").CombinedOutput()
		return string(out), err
	}
	call := func() (string, error) { return callTool("ZZ_TEST_TEMPERATURE", "37.77|-122.42") }
	if out, err := call(); err != nil || !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"key": "ZZ_TEST_TEMPERATURE"`) {
		t.Fatalf("inspector tools/call: %v\n%s", err, out)
	}
	var tok map[string]any
	for _, x := range h.do(t, req{Method: "GET", Path: "/api/tokens"}).JSON["tokens"].([]any) {
		if x := x.(map[string]any); x["client"] != nil && x["client"] != "" {
			if tok != nil {
				t.Fatalf("two tokens held by clients: %v and %v", tok, x)
			}
			tok = x
		}
	}
	if tok == nil || fmt.Sprint(tok["categories"]) != "[tools]" || person != nil && tok["person"] != person["id"] {
		t.Fatalf("the client's token %v: want the consented scope (tools), and the person %v", tok, person)
	}
	id := tok["id"].(string)
	// The store holds what the sign-in made: the Inspector's client, used
	// by a consent; its code, spent; the grant's refresh token; and the
	// capability token the client holds.
	var client string
	var codes, refresh int
	if err := tg.DB(t).QueryRow(`SELECT c.name, (SELECT COUNT(*) FROM oauth_codes o WHERE o.client_id = c.client_id AND o.used_at IS NOT NULL),
		(SELECT COUNT(*) FROM oauth_refresh f WHERE f.token_id = t.id AND f.client_id = c.client_id)
		FROM oauth_clients c JOIN tokens t ON t.client_id = c.client_id WHERE c.used_at IS NOT NULL AND t.id = ?`, id).Scan(&client, &codes, &refresh); err != nil ||
		client != "MCP Inspector" || codes != 1 || refresh < 1 {
		t.Fatalf("the %s database holds client %q, %d spent codes, %d refresh tokens (%v): want the MCP Inspector's, 1, at least 1", tg.Name, client, codes, refresh, err)
	}
	// The token the Inspector stored keeps to its scope on a call the
	// Inspector itself would not make (its tool list lacks the row).
	access := storedToken(t, home)
	bearer := map[string]string{"Authorization": "Bearer " + access}
	called := h.do(t, req{Method: "POST", Path: "/api/dispatch", NoAuth: true, Header: bearer,
		Body: map[string]any{"key": "ZZ_TEST_TEMPERATURE", "body": "37.77|-122.42"}})
	expect(t, called, 200, map[string]any{"ok": true})
	expect(t, h.do(t, req{Method: "POST", Path: "/api/dispatch", NoAuth: true, Header: bearer,
		Body: map[string]any{"key": "WEATHER_TYPED", "body": "52.52|13.41"}}), 404, map[string]any{"error": "unknown_key"})
	if person != nil { // the call's receipt names the person, and verifies
		confirm := h.do(t, req{Method: "GET", Path: "/api/dispatch?confirm=" + proof(t, called)["invocation_id"].(string), NoAuth: true})
		expect(t, confirm, 200, map[string]any{"confirmed": true, "status": "PROVEN_MATERIAL_RESULT"})
		if rc := confirm.JSON["receipt"].(map[string]any); rc["person_iss"] != person["issuer"] || rc["person_sub"] != person["subject"] {
			t.Fatalf("the receipt of the client's call does not name %v: %s", person["subject"], confirm.Raw)
		}
	}
	run(t, ctx, chromedp.Navigate(h.URL+"/#/tokens"), console.Ready, console.Click(`#tokens tr[data-token="`+id+`"] button`),
		console.Wait(`document.querySelector('#tokens tr[data-token="`+id+`"] .state').innerText.startsWith('revoked')`))
	if out, err := call(); err == nil || !strings.Contains(out, "auth_required") {
		t.Fatalf("after the token was revoked in the console the Inspector's call: %v\n%s", err, out)
	}
	if s := status(t, h, access); s != 401 {
		t.Fatalf("the revoked token answers %d, want 401", s)
	}
}

// storedToken is the access token (rct_…) in the Inspector's store under home.
func storedToken(t *testing.T, home string) string {
	t.Helper()
	found := map[string]bool{}
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			for _, m := range accessToken.FindAll(b, -1) {
				found[string(m)] = true
			}
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("the Inspector's store under %s holds %d access tokens, want 1", home, len(found))
	}
	for tok := range found {
		return tok
	}
	return ""
}

// accessToken is a capability token's secret: rct_ and 32 bytes in base64url.
var accessToken = regexp.MustCompile(`rct_[A-Za-z0-9_-]{43}`)
