package test

// People sign in to a host through the real OpenID provider
// (test/oidcprovider, npm's oidc-provider), over HTTP with a cookie jar, as a
// browser would. Other tests use these helpers; their names and signatures
// stay as they are:
//
//	p := startIDP(t)                       // the provider, once per test (or per TestHosts)
//	tg := startEmbedded(t, p.Env())        // any backend's Start, or startHost(t, nil, p.Env()...)
//	alice := signIn(t, tg.URL, "alice")    // an *http.Client holding alice's session cookie
//	me := asPerson(tg.host, alice).do(t, req{Method: "GET", Path: "/api/me"})
//	p.SetGroups(t, "carol", "tools-viewers") // carol's groups from her next sign-in on
//
// The accounts (provider.mjs): alice in tools-admins (admin), bob in
// tools-editors (editor), carol in tools-callers (caller), erin in
// tools-approvers (approver), dave in no group (no role); any password.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The login client's secret, and the roles the provider's groups map to on
// every host startIDP's Env configures.
const (
	loginSecret = "login-secret-0b3e91c4"
	peopleRoles = "tools-admins=admin,tools-editors=editor,tools-approvers=approver,tools-callers=caller,tools-viewers=viewer"
)

// idp is a running test provider that people sign in with.
type idp struct {
	Issuer string
	groups string // the provider's GROUPS_FILE
	mu     sync.Mutex
	set    map[string][]string
}

// startIDP starts the provider (test/oidcprovider) on a loopback port, with
// its login client "rowcall-login" for any host on loopback.
func startIDP(t *testing.T) *idp {
	t.Helper()
	p := &idp{groups: filepath.Join(t.TempDir(), "groups.json"), set: map[string][]string{}}
	p.Issuer = oidcProvider(t, "http://127.0.0.1/connect/callback", loginSecret, 3600, "GROUPS_FILE="+p.groups)
	return p
}

// Env is the environment (NAME=value) that makes a host sign people in
// through p: any backend's Start takes it, and so does startHost.
func (p *idp) Env() []string {
	return []string{"ROWCALL_OIDC_ISSUER=" + p.Issuer, "ROWCALL_OIDC_CLIENT_ID=rowcall-login", "ROWCALL_OIDC_CLIENT_SECRET=" + loginSecret,
		"ROWCALL_OIDC_ROLES=" + peopleRoles, "ROWCALL_OIDC_SCOPES=groups", "ROWCALL_OIDC_NAME=Test IdP"}
}

// SetGroups makes account's groups at the provider groups, from its next
// sign-in on; with none given, the account is in no group. Restore gives
// back its own.
func (p *idp) SetGroups(t testing.TB, account string, groups ...string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if groups == nil {
		groups = []string{}
	}
	p.set[account] = groups
	p.write(t)
}

// Restore gives account back the groups provider.mjs gives it.
func (p *idp) Restore(t testing.TB, account string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.set, account)
	p.write(t)
}

func (p *idp) write(t testing.TB) {
	b, _ := json.Marshal(p.set)
	tmp := p.groups + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p.groups); err != nil { // the provider never reads half a file
		t.Fatal(err)
	}
}

// signIn signs account in at the host at hostURL through the provider's
// pages (GET /login, the login form with any password, the consent form,
// back to /login/callback) and returns the browser: a client whose cookie
// jar holds the session. It fails the test unless the sign-in lands on the
// host's console with a session cookie.
func signIn(t testing.TB, hostURL, account string) *http.Client {
	t.Helper()
	b, callback := beginSignIn(t, hostURL, account)
	res, err := b.Get(callback)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if u, _ := url.Parse(hostURL); res.StatusCode != 200 || res.Request.URL.Path != u.Path+"/" {
		t.Fatalf("signing %s in: the callback ended at %s, %d: %s", account, res.Request.URL, res.StatusCode, body)
	}
	if sessionCookie(b, hostURL) == "" {
		t.Fatalf("signing %s in: no session cookie", account)
	}
	return b
}

// beginSignIn does what signIn does up to the provider's redirect back to
// the host, which it does not follow: it returns the browser and the
// callback URL (with the code, the state and the issuer).
func beginSignIn(t testing.TB, hostURL, account string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	var callback string
	b := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		if strings.HasSuffix(r.URL.Path, "/login/callback") {
			callback = r.URL.String()
			return http.ErrUseLastResponse
		}
		return nil
	}}
	res, err := b.Get(hostURL + "/login")
	for step := 0; callback == ""; step++ {
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || step == 4 {
			t.Fatalf("signing %s in, at %s: %d %s", account, res.Request.URL, res.StatusCode, body)
		}
		m := formAction.FindStringSubmatch(string(body))
		if m == nil {
			t.Fatalf("signing %s in: the provider's page at %s has no form: %s", account, res.Request.URL, body)
		}
		action, _ := res.Request.URL.Parse(m[1])
		form := url.Values{"prompt": {"consent"}}
		if strings.Contains(string(body), `value="login"`) {
			form = url.Values{"prompt": {"login"}, "login": {account}, "password": {"any"}}
		}
		res, err = b.PostForm(action.String(), form)
	}
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return b, callback
}

// sessionCookie is the session cookie b holds for hostURL ("" for none).
func sessionCookie(b *http.Client, hostURL string) string {
	u, _ := url.Parse(hostURL + "/")
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == "rowcall_session" {
			return c.Value
		}
	}
	return ""
}

// asPerson is h as the person whose browser b is: do sends requests with
// their session cookie and no key, and a request that changes something with
// the host's own Origin, as its pages' requests carry.
func asPerson(h *host, b *http.Client) personAt {
	return personAt{h: h, b: b}
}

type personAt struct {
	h *host
	b *http.Client
}

func (p personAt) do(t testing.TB, r req) resp {
	t.Helper()
	r.NoAuth = true
	header := map[string]string{}
	if r.Method != "GET" && r.Method != "HEAD" {
		header["Origin"] = p.h.URL
	}
	for k, v := range r.Header {
		header[k] = v
	}
	r.Header = header
	h := *p.h
	h.Client = p.b
	return h.do(t, r)
}
