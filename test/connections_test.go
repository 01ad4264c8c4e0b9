package test

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/testenv"
)

// oidcProvider starts the pinned npm oidc-provider (test/oidcprovider) on a
// loopback port: client "rowcall" with secret, redirecting to redirect, its
// access tokens living accessTTL seconds; env adds to its environment
// (test/oidcprovider/provider.mjs). It returns the issuer URL.
func oidcProvider(t *testing.T, redirect, secret string, accessTTL int, env ...string) string {
	t.Helper()
	dir := testenv.NPM(t, "oidcprovider", filepath.Join("node_modules", "oidc-provider", "package.json"))
	cmd := exec.Command("node", filepath.Join(dir, "provider.mjs"))
	cmd.Env = append(os.Environ(), "REDIRECT_URI="+redirect, "CLIENT_SECRET="+secret, "ACCESS_TTL="+strconv.Itoa(accessTTL))
	cmd.Env = append(cmd.Env, env...)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if issuer, ok := strings.CutPrefix(lines.Text(), "issuer "); ok {
			go io.Copy(io.Discard, out)
			return issuer
		}
	}
	t.Fatal("oidc-provider did not start")
	return ""
}

// whoami is the loopback upstream: it asks the provider's userinfo endpoint
// whose access token the call carries, answers that account, and keeps every
// token it was sent.
type whoami struct {
	*httptest.Server
	mu     sync.Mutex
	tokens []string
}

func newWhoami(t *testing.T, issuer string) *whoami {
	w := &whoami{}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			http.Error(rw, "no bearer token", http.StatusUnauthorized)
			return
		}
		w.mu.Lock()
		w.tokens = append(w.tokens, tok)
		w.mu.Unlock()
		ui, _ := http.NewRequest("GET", issuer+"/me", nil)
		ui.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(ui)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		var claims struct{ Sub string }
		if json.NewDecoder(res.Body).Decode(&claims); res.StatusCode != 200 || claims.Sub == "" {
			http.Error(rw, "the provider does not know this token", http.StatusUnauthorized)
			return
		}
		io.WriteString(rw, "you are "+claims.Sub)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *whoami) seen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.tokens...)
}

var formAction = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)

// linkIn finds the link to connect in a connection_required answer.
var linkIn = regexp.MustCompile(`https?://\S+/connect\?c=[A-Za-z0-9._%-]+`)

// connectAs is a person opening link in a browser and signing in to the
// provider as account: rowcall's connect page, the provider's login and
// consent pages, back to rowcall's callback.
func connectAs(t *testing.T, link, account string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	page := func(res *http.Response, err error) (string, *url.URL) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", res.Request.URL, res.StatusCode, body)
		}
		return string(body), res.Request.URL
	}
	body, at := page(b.Get(link))
	c := at.Query().Get("c")
	if !strings.Contains(body, `id="connect"`) {
		t.Fatalf("connect page: %s", body)
	}
	// submit posts the page's form as a browser does: to its action,
	// relative to the page.
	submit := func(form url.Values) {
		t.Helper()
		m := formAction.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("the page at %s has no form: %s", at, body)
		}
		action, _ := at.Parse(m[1])
		body, at = page(b.PostForm(action.String(), form))
	}
	submit(url.Values{"c": {c}})
	for _, form := range []url.Values{{"prompt": {"login"}, "login": {account}, "password": {"any"}}, {"prompt": {"consent"}}} {
		if !strings.Contains(body, `value="`+form.Get("prompt")+`"`) {
			t.Fatalf("provider page at %s has no %s form: %s", at, form.Get("prompt"), body)
		}
		submit(form)
	}
	if !strings.Contains(body, `id="connected"`) {
		t.Fatalf("after consent, %s: %s", at, body)
	}
}

// Each caller's own upstream account: two tokens connect two accounts at a
// real OpenID provider on loopback, and each call carries its own caller's
// access token, checked by an upstream that asks the provider's userinfo
// endpoint; an expired token is refreshed; a connection revoked by its holder
// or the owner is no longer used; and no token value shows in any answer,
// plan, receipt or log line, nor in the database file.
func TestConnections(t *testing.T) {
	port := freePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	const secret = "client-secret-5d7c1e"
	const ttl = 8 // seconds an access token lives
	issuer := oidcProvider(t, base+"/connect/callback", secret, ttl)
	up := newWhoami(t, issuer)
	providers := filepath.Join(t.TempDir(), "connections.json")
	cfg, _ := json.Marshal(map[string]any{"providers": map[string]any{"idp": map[string]any{
		"discovery_url": issuer + "/.well-known/openid-configuration", "client_id": "rowcall",
		"client_secret_env": "IDP_CLIENT_SECRET", "scopes": []string{"openid"}}}})
	os.WriteFile(providers, cfg, 0o600)
	key := make([]byte, 32)
	rand.Read(key)
	h := startHost(t, append([]string{"--addr", "127.0.0.1:" + strconv.Itoa(port)}, allowLoopback...),
		"ROWCALL_CONNECTIONS="+providers, "ROWCALL_CONNECTIONS_KEY=k1:"+base64.StdEncoding.EncodeToString(key), "IDP_CLIENT_SECRET="+secret)
	if h.URL != base {
		t.Fatalf("host at %s, want %s", h.URL, base)
	}
	createRow(t, h, map[string]any{"key": "WHOAMI", "type": "http", "target": "GET " + up.URL + "/whoami", "auth": "bearer:connection:idp"})
	alice, aliceID, _ := mint(t, h, map[string]any{"keys": []string{"WHOAMI"}})
	bob, bobID, _ := mint(t, h, map[string]any{"keys": []string{"WHOAMI"}})

	var answers []string // every answer, checked for token values at the end
	call := func(token string, shape bool) resp {
		t.Helper()
		r := req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "WHOAMI", "shape": shape}}
		var got resp
		if token == "" {
			got = h.do(t, r)
		} else {
			got = asToken(t, h, token, r)
		}
		answers = append(answers, string(got.Raw))
		return got
	}
	required := func(got resp) string {
		t.Helper()
		res, _ := got.JSON["result"].(string)
		if !strings.HasPrefix(res, "ERR:http:WHOAMI:ERR:auth:connection_required:idp") {
			t.Fatalf("without a connection: %s", got.Raw)
		}
		link := linkIn.FindString(res)
		if !strings.HasPrefix(link, base+"/connect?c=") {
			t.Fatalf("no link to connect in %q", res)
		}
		return link
	}

	// Without a connection: the stable code and a link; nothing reached the upstream.
	link := required(call(alice, false))
	// A link is sealed: one altered by a byte is refused, and connects nothing.
	forged := link[:len(link)-2] + map[bool]string{true: "AA", false: "BB"}[!strings.HasSuffix(link, "AA")]
	if res, err := http.Get(forged); err != nil || res.StatusCode != 400 {
		t.Fatalf("a forged link: %v %v", res, err)
	}
	connectAs(t, link, "alice")
	connectAs(t, required(call(bob, false)), "bob")
	if n := len(up.seen()); n != 0 {
		t.Fatalf("the upstream was called %d times before any connection", n)
	}
	// The owner has not connected: alice's and bob's connections are theirs alone.
	required(call("", false))

	for _, c := range []struct{ token, who string }{{alice, "alice"}, {bob, "bob"}, {alice, "alice"}} {
		got := call(c.token, false)
		expect(t, got, 200, map[string]any{"ok": true, "result": "HTTP 200:you are " + c.who})
	}
	seen := up.seen()
	if len(seen) != 3 || seen[0] == seen[1] || seen[2] == seen[1] {
		t.Fatalf("tokens at the upstream: want alice's, bob's, alice's again, got %d (%v distinct first two)", len(seen), seen[0] != seen[1])
	}

	// Shape mode names the connection, never its value, and sends nothing.
	got := call(alice, true)
	plan, _ := got.JSON["shape"].(map[string]any)
	if plan["connection"] != "idp" || plan["headers"].(map[string]any)["Authorization"] != nil {
		t.Fatalf("shape: %s", got.Raw)
	}
	if len(up.seen()) != 3 {
		t.Fatal("shape mode reached the upstream")
	}

	// The connections list shows holders and expiry, no token.
	list := asToken(t, h, alice, req{Method: "GET", Path: "/api/connections"})
	conns, _ := list.JSON["connections"].([]any)
	if len(conns) != 1 || conns[0].(map[string]any)["holder"] != aliceID {
		t.Fatalf("alice's connections: %s", list.Raw)
	}
	answers = append(answers, string(list.Raw), string(h.do(t, req{Method: "GET", Path: "/api/connections"}).Raw))

	// Refresh: once alice's access token is about to expire, the next call
	// uses a fresh one for the same account.
	exp, err := time.Parse(time.RFC3339Nano, conns[0].(map[string]any)["expires_at"].(string))
	if err != nil {
		t.Fatalf("expires_at: %s", list.Raw)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(exp.Add(-4 * time.Second)); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the access token did not near its expiry")
		}
	}
	expect(t, call(alice, false), 200, map[string]any{"ok": true, "result": "HTTP 200:you are alice"})
	if s := up.seen(); slices.Contains(s[:len(s)-1], s[len(s)-1]) {
		t.Fatal("an expired access token was sent again, not refreshed")
	}

	// No token value anywhere a person or a log could read it, while both
	// connections are stored.
	unreadable(t, h, h.out.String(), answers, up.seen(), "refresh_token", "access_token", secret)
	// Revocation by the holder, then by the owner: the next call needs a new connection.
	expect(t, asToken(t, h, alice, req{Method: "DELETE", Path: "/api/connections/idp"}), 200, map[string]any{"revoked": true})
	required(call(alice, false))
	expect(t, call(bob, false), 200, map[string]any{"result": "HTTP 200:you are bob"})
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/connections/idp?holder=" + bobID}), 200, map[string]any{"revoked": true})
	required(call(bob, false))

	// Revoking a token forgets the connections it made.
	connectAs(t, required(call(alice, false)), "alice")
	expect(t, call(alice, false), 200, map[string]any{"result": "HTTP 200:you are alice"})
	expect(t, h.do(t, req{Method: "DELETE", Path: "/api/tokens/" + aliceID}), 200, nil)
	if all := h.do(t, req{Method: "GET", Path: "/api/connections"}); strings.Contains(string(all.Raw), aliceID) {
		t.Fatalf("a revoked token's connection is kept: %s", all.Raw)
	}

	// So does a client's revocation of its OAuth grant (RFC 7009).
	agent := registerClient(t, h, "Agent")
	access := agent.exchange(t, agent.code(t)).JSON["access_token"].(string)
	connectAs(t, required(call(access, false)), "alice")
	expect(t, call(access, false), 200, map[string]any{"result": "HTTP 200:you are alice"})
	count := func() int {
		conns, _ := h.do(t, req{Method: "GET", Path: "/api/connections"}).JSON["connections"].([]any)
		return len(conns)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d connections after the grant connected, want its one", n)
	}
	expect(t, h.do(t, req{Method: "POST", Path: "/oauth/revoke", NoAuth: true, Body: url.Values{"token": {access}, "client_id": {agent.id}}.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}), 200, nil)
	if n := count(); n != 0 {
		t.Fatalf("a revoked OAuth grant's connection is kept (%d connections)", n)
	}
}

// unreadable checks that no token the upstream was sent shows in answers
// (with the receipts added), the host's log or any file of its data
// directory (h.Data), and that neither do the strings also.
func unreadable(t *testing.T, h *host, log string, answers, tokens []string, also ...string) {
	t.Helper()
	answers = append(answers, string(h.do(t, req{Method: "GET", Path: "/api/receipts"}).Raw))
	var stored []byte
	filepath.WalkDir(h.Data, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(path)
			stored = append(stored, b...)
		}
		return nil
	})
	for _, tok := range tokens {
		for i, a := range answers {
			if strings.Contains(a, tok) {
				t.Fatalf("an access token in answer %d: %s", i, a)
			}
		}
		if strings.Contains(log, tok) {
			t.Fatal("an access token in the host's log")
		}
		if strings.Contains(string(stored), tok) {
			t.Fatal("an access token readable in the database file")
		}
	}
	for _, s := range also {
		if strings.Contains(string(stored), s) {
			t.Fatalf("%q readable in the database file", s)
		}
	}
}

// Token exchange (RFC 8693) instead of a stored connection: the host signs a
// subject token naming the calling credential and exchanges it at a real
// OpenID provider on loopback (test/oidcprovider registers the grant), which
// maps the holder to its own account. Two callers, two upstream accounts,
// each its own token, checked by an upstream that asks the provider's
// userinfo endpoint; the exchanged token is reused until it nears its expiry,
// then exchanged again; a subject the provider does not accept, or one it
// finds expired, gets a stable code and changes nothing; no token value is
// readable in any answer, receipt, log line or the database file.
//
// The same test then connects a third provider in the console (the
// authorization code flow that TestConnections covers in depth), so on the
// worker (TestWorkerConnections) it covers both ways.
func TestTokenExchange(t *testing.T) {
	exchangeOn(t, func(t *testing.T, env ...string) (*host, func() string) {
		h := startHost(t, allowLoopback, env...)
		return h, h.out.String
	})
}

// exchangeOn runs the token exchange test on the host start starts with env;
// it returns the host and its log so far.
func exchangeOn(t *testing.T, start func(t *testing.T, env ...string) (*host, func() string)) {
	const secret = "client-secret-8a41f0"
	// Seconds an exchanged access token lives: the host exchanges again 5 s
	// before expiry, so the calls that check it is reused (a few, through
	// the provider) have 15 s, time enough on a busy machine.
	const ttl = 20
	trust := filepath.Join(t.TempDir(), "subjects.json")
	// The provider starts after the host, which must name it first: the
	// host reads its discovery document on first use.
	port := strconv.Itoa(freePort(t))
	issuer := "http://127.0.0.1:" + port
	up := newWhoami(t, issuer)
	provider := func(client string) map[string]any {
		return map[string]any{"discovery_url": issuer + "/.well-known/openid-configuration", "client_id": client,
			"client_secret_env": "STS_CLIENT_SECRET", "scopes": []string{"openid"}, "token_exchange": map[string]any{"audience": up.URL}}
	}
	idp := provider("rowcall")
	delete(idp, "token_exchange")
	cfg, _ := json.Marshal(map[string]any{"providers": map[string]any{"sts": provider("rowcall-sts"), "late": provider("rowcall-late"), "idp": idp}})
	h, log := start(t, "ROWCALL_CONNECTIONS="+string(cfg), "ROWCALL_CONNECTIONS_KEY=k1:"+randomKey(32), "STS_CLIENT_SECRET="+secret)
	if got := oidcProvider(t, h.URL+"/connect/callback", secret, ttl, "PORT="+port, "SUBJECTS_FILE="+trust, "LATE_SKEW=300"); got != issuer {
		t.Fatalf("the provider is at %s, want %s", got, issuer)
	}
	createRow(t, h, map[string]any{"key": "WHOAMI", "type": "http", "target": "GET " + up.URL + "/whoami", "auth": "bearer:connection:sts"})
	createRow(t, h, map[string]any{"key": "LATE", "type": "http", "target": "GET " + up.URL + "/whoami", "auth": "bearer:connection:late"})
	createRow(t, h, map[string]any{"key": "IDP", "type": "http", "target": "GET " + up.URL + "/whoami", "auth": "bearer:connection:idp"})
	alice, aliceID, _ := mint(t, h, map[string]any{"keys": []string{"WHOAMI", "LATE"}})
	bob, bobID, _ := mint(t, h, map[string]any{"keys": []string{"WHOAMI", "IDP"}})
	carol, carolID, _ := mint(t, h, map[string]any{"keys": []string{"WHOAMI"}})
	linked, _ := json.Marshal(map[string]any{"issuer": h.URL, "subjects": map[string]string{aliceID: "alice", bobID: "bob"}})
	os.WriteFile(trust, linked, 0o600)

	var answers []string
	call := func(token, key string, shape bool) resp {
		t.Helper()
		got := asToken(t, h, token, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": key, "shape": shape}})
		answers = append(answers, string(got.Raw))
		return got
	}
	refused := func(got resp, key, provider, why string) {
		t.Helper()
		res, _ := got.JSON["result"].(string)
		if !strings.HasPrefix(res, "ERR:http:"+key+":ERR:auth:exchange_refused:"+provider) || !strings.Contains(res, why) {
			t.Fatalf("want exchange_refused:%s (%s): %s", provider, why, got.Raw)
		}
	}

	// The subject tokens' keys are published where the provider reads them.
	jwks := h.do(t, req{Method: "GET", Path: "/.well-known/jwks.json", NoAuth: true})
	if keys, _ := jwks.JSON["keys"].([]any); jwks.Status != http.StatusOK || len(keys) != 1 || keys[0].(map[string]any)["kid"] != "k1" {
		t.Fatalf("jwks: %s", jwks.Raw)
	}
	meta := h.do(t, req{Method: "GET", Path: "/.well-known/openid-configuration", NoAuth: true})
	expect(t, meta, http.StatusOK, map[string]any{"jwks_uri": h.URL + "/.well-known/jwks.json"})

	for _, c := range []struct{ token, who string }{{alice, "alice"}, {bob, "bob"}, {alice, "alice"}} {
		expect(t, call(c.token, "WHOAMI", false), http.StatusOK, map[string]any{"ok": true, "result": "HTTP 200:you are " + c.who})
	}
	seen := up.seen()
	if len(seen) != 3 || seen[0] == seen[1] || seen[2] != seen[0] {
		t.Fatalf("tokens at the upstream: want alice's, bob's, alice's again (cached), got %d, %v %v", len(seen), seen[0] != seen[1], seen[2] == seen[0])
	}

	// A subject the provider links to no account, and a subject token the
	// provider finds expired: a stable code, nothing sent upstream, and
	// alice's exchanged token is the one she had.
	refused(call(carol, "WHOAMI", false), "WHOAMI", "sts", carolID)
	refused(call(alice, "LATE", false), "LATE", "late", "invalid_grant")
	if n := len(up.seen()); n != 3 {
		t.Fatalf("a refused exchange reached the upstream (%d calls)", n)
	}
	expect(t, call(alice, "WHOAMI", false), http.StatusOK, map[string]any{"result": "HTTP 200:you are alice"})
	if s := up.seen(); s[len(s)-1] != seen[0] {
		t.Fatal("a refused exchange changed alice's token")
	}

	// Shape mode names the provider, never a token, and exchanges nothing.
	plan, _ := call(bob, "WHOAMI", true).JSON["shape"].(map[string]any)
	if plan["connection"] != "sts" || plan["headers"].(map[string]any)["Authorization"] != nil {
		t.Fatalf("shape: %v", plan)
	}
	// Nothing to connect: the host exchanges, and stores nothing.
	expect(t, asToken(t, h, alice, req{Method: "POST", Path: "/api/connections/sts"}), http.StatusBadRequest, map[string]any{"error": "invalid_request"})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/connections"}), http.StatusOK, map[string]any{"connections": []any{}})

	// Near its expiry, alice's token is exchanged again, for the same account.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		expect(t, call(alice, "WHOAMI", false), http.StatusOK, map[string]any{"result": "HTTP 200:you are alice"})
		if s := up.seen(); s[len(s)-1] != seen[0] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the exchanged token was used past its expiry")
		}
	}

	// The console flow: bob connects his account at idp, and his calls carry it.
	res, _ := call(bob, "IDP", false).JSON["result"].(string)
	link := linkIn.FindString(res)
	if !strings.HasPrefix(res, "ERR:http:IDP:ERR:auth:connection_required:idp") || !strings.HasPrefix(link, h.URL+"/connect?c=") {
		t.Fatalf("without a connection: %s", answers[len(answers)-1])
	}
	connectAs(t, link, "bob")
	expect(t, call(bob, "IDP", false), http.StatusOK, map[string]any{"result": "HTTP 200:you are bob"})
	list := asToken(t, h, bob, req{Method: "GET", Path: "/api/connections"})
	if conns, _ := list.JSON["connections"].([]any); len(conns) != 1 || conns[0].(map[string]any)["provider"] != "idp" {
		t.Fatalf("bob's connections: %s", list.Raw)
	}
	answers = append(answers, string(list.Raw))
	unreadable(t, h, log(), answers, up.seen(), "refresh_token", "access_token", secret)
}

// TestWorkerConnections is TestTokenExchange on the Cloudflare worker
// (wrangler dev, workerd, local D1): token exchange, and a connection made
// in the console, sealed in D1 with the key from the worker's secret.
func TestWorkerConnections(t *testing.T) {
	exchangeOn(t, func(t *testing.T, env ...string) (*host, func() string) {
		w := startWorker(t, env)
		w.host.Data = w.Persist
		return w.host, w.Output
	})
}
