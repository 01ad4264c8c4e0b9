package test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// refusedCode is the stable code a refused sign-in's page shows.
var refusedCode = regexp.MustCompile(`<code id="code">([^<]*)</code>`)

// getPage gets u with b (following redirects as b does) and returns the
// final status, its body and whether it set a session cookie.
func getPage(t *testing.T, b *http.Client, u string) (int, string, bool) {
	t.Helper()
	res, err := b.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	set := false
	for r := res; r != nil; r = r.Request.Response {
		for _, c := range r.Cookies() {
			set = set || (c.Name == "rowcall_session" && c.Value != "")
		}
	}
	return res.StatusCode, string(body), set
}

// signInRefused checks that opening u in b ends on a refusal page with the
// stable code want, and begins no session.
func signInRefused(t *testing.T, b *http.Client, u, want string) {
	t.Helper()
	status, body, set := getPage(t, b, u)
	m := refusedCode.FindStringSubmatch(body)
	if status != http.StatusForbidden || m == nil || m[1] != want || !strings.Contains(body, "How to fix: ") {
		t.Fatalf("%s: %d %s, want 403 %s", u, status, body, want)
	}
	if set {
		t.Fatalf("%s: a refused sign-in set a session cookie", u)
	}
}

// Hostile sign-ins and sessions, on the embedded host signing people in
// through the real provider: a cookie-authenticated write from another
// site; a sign-in finished in a browser that did not begin it; the state
// and the code replayed; a session cookie planted before sign-in; a person
// changing their own role; a token minted by a person used after an admin
// disabled them. (Forged, expired, wrong-audience, wrong-nonce and
// other-issuer ID tokens: internal/signin's TestFinish, against go-oidc.)
func TestSignInHostile(t *testing.T) {
	p := startIDP(t)
	h := startHost(t, nil, p.Env()...)
	createRow(t, h, map[string]any{"key": "HOSTILE_ECHO", "type": "http", "target": "GET http://127.0.0.1:1/x", "category": "hostile"})
	alice := asPerson(h, signIn(t, h.URL, "alice"))
	bobBrowser := signIn(t, h.URL, "bob")
	bob := asPerson(h, bobBrowser)

	t.Run("cross_site", func(t *testing.T) {
		// A form on another site posts to the host, and the browser sends
		// bob's cookie along (SameSite=Lax leaves a top-level POST out, but
		// a same-site subdomain or an older browser would not).
		form := `key=HOSTILE_CSRF&type=http&content=%23+WHAT%3A+planted`
		for _, header := range []map[string]string{
			{"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"},
			{"Origin": "null", "Content-Type": "application/x-www-form-urlencoded"},
			{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/x-www-form-urlencoded"},
			{"Sec-Fetch-Site": "same-site", "Content-Type": "application/json"},
			{"Origin": h.URL, "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"},
		} {
			got := bob.do(t, req{Method: "POST", Path: "/api/directory", Body: form, Header: header})
			expect(t, got, 403, map[string]any{"error": "cross_site_request"})
			if got.JSON["how_to_fix"] == "" {
				t.Fatalf("no how_to_fix: %s", got.Raw)
			}
		}
		// Without Origin or fetch metadata, nothing says it is the host's own page.
		b := *bobBrowser
		noOrigin := &host{URL: h.URL, Client: &b}
		expect(t, noOrigin.do(t, req{Method: "POST", Path: "/api/directory", NoAuth: true, Body: map[string]any{"key": "HOSTILE_CSRF", "type": "http",
			"content": "# WHAT: planted"}}), 403, map[string]any{"error": "cross_site_request"})
		expect(t, bob.do(t, req{Method: "POST", Path: "/logout", Header: map[string]string{"Origin": "http://evil.example"}}), 403,
			map[string]any{"error": "cross_site_request"})
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/HOSTILE_CSRF"}), 404, nil)
		expect(t, bob.do(t, req{Method: "GET", Path: "/api/me"}), 200, map[string]any{"kind": "person"})
		// The same write from the host's own page lands.
		expect(t, bob.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "HOSTILE_OWN", "type": "http",
			"content": "# WHAT: from the console", "category": "hostile"}}), 201, nil)
	})

	t.Run("state", func(t *testing.T) {
		b, callback := beginSignIn(t, h.URL, "carol")
		// Sent to another browser (login cross-site request forgery): its
		// state is not that browser's.
		jar, _ := cookiejar.New(nil)
		signInRefused(t, &http.Client{Jar: jar}, callback, "signin_failed:state")
		// The browser that began it finishes it, once.
		if status, body, set := getPage(t, b, callback); status != 200 || !set {
			t.Fatalf("the sign-in in its own browser: %d %s", status, body)
		}
		signInRefused(t, b, callback, "signin_failed:state")
		// Even with the login cookie put back, the state was taken.
		cb, _ := url.Parse(callback)
		b.Jar.SetCookies(cb, []*http.Cookie{{Name: "rowcall_login", Value: cb.Query().Get("state"), Path: "/"}})
		signInRefused(t, b, callback, "signin_failed:state")
	})

	t.Run("code", func(t *testing.T) {
		b, callback := beginSignIn(t, h.URL, "carol")
		if status, body, _ := getPage(t, b, callback); status != 200 {
			t.Fatalf("sign-in: %d %s", status, body)
		}
		// The used code, sent back with a state this browser holds now.
		noFollow := *b
		noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		res, err := noFollow.Get(h.URL + "/login")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		auth, _ := url.Parse(res.Header.Get("Location"))
		old, _ := url.Parse(callback)
		q := old.Query()
		q.Set("state", auth.Query().Get("state"))
		signInRefused(t, b, h.URL+"/login/callback?"+q.Encode(), "signin_failed:code")
	})

	t.Run("fixation", func(t *testing.T) {
		// A cookie planted in the browser before sign-in (by a sibling
		// subdomain, or left by someone else) is not the session after.
		jar, _ := cookiejar.New(nil)
		u, _ := url.Parse(h.URL)
		const planted = "planted-session-secret-0000000000000000000000"
		jar.SetCookies(u, []*http.Cookie{{Name: "rowcall_session", Value: planted, Path: "/"}})
		b, callback := beginSignIn(t, h.URL, "carol")
		b.Jar.SetCookies(u, []*http.Cookie{{Name: "rowcall_session", Value: planted, Path: "/"}})
		if status, body, set := getPage(t, b, callback); status != 200 || !set {
			t.Fatalf("sign-in: %d %s", status, body)
		}
		if got := sessionCookie(b, h.URL); got == "" || got == planted {
			t.Fatalf("the session cookie after sign-in is %q", got)
		}
		fixed := &http.Client{Jar: jar}
		expect(t, asPerson(h, fixed).do(t, req{Method: "GET", Path: "/api/me"}), 401, map[string]any{"error": "unauthorized"})
		// A browser that holds a live session and signs in again gets a new
		// one.
		before := sessionCookie(b, h.URL)
		b2, callback2 := beginSignIn(t, h.URL, "carol")
		b2.Jar.SetCookies(u, []*http.Cookie{{Name: "rowcall_session", Value: before, Path: "/"}})
		if status, _, _ := getPage(t, b2, callback2); status != 200 || sessionCookie(b2, h.URL) == before {
			t.Fatalf("a second sign-in kept the session cookie it found (%d)", status)
		}
	})

	t.Run("own_role", func(t *testing.T) {
		me := alice.do(t, req{Method: "GET", Path: "/api/me"})
		aliceID := me.JSON["person"].(map[string]any)["id"].(string)
		for _, body := range []map[string]any{{"role": "owner"}, {"role": "viewer"}, {"categories": []string{"hostile"}}, {"disabled": true}} {
			got := alice.do(t, req{Method: "PATCH", Path: "/api/people/" + aliceID, Body: body})
			expect(t, got, 403, map[string]any{"error": "forbidden"})
		}
		bobID := bob.do(t, req{Method: "GET", Path: "/api/me"}).JSON["person"].(map[string]any)["id"].(string)
		expect(t, bob.do(t, req{Method: "PATCH", Path: "/api/people/" + bobID, Body: map[string]any{"role": "admin"}}), 403,
			map[string]any{"error": "role_forbids:editor:people"})
		// An admin may not grant what their own role does not hold.
		expect(t, alice.do(t, req{Method: "PATCH", Path: "/api/people/" + bobID, Body: map[string]any{"role": "owner"}}), 403,
			map[string]any{"error": "forbidden"})
		for who, role := range map[personAt]string{alice: "admin", bob: "editor"} {
			if got := who.do(t, req{Method: "GET", Path: "/api/me"}); got.JSON["person"].(map[string]any)["role"] != role {
				t.Fatalf("after the refusals: %s", got.Raw)
			}
		}
	})

	t.Run("disabled", func(t *testing.T) {
		erin := asPerson(h, signIn(t, h.URL, "erin"))
		erinID := erin.do(t, req{Method: "GET", Path: "/api/me"}).JSON["person"].(map[string]any)["id"].(string)
		got := erin.do(t, req{Method: "POST", Path: "/api/tokens", Body: map[string]any{"name": "erin-agent", "categories": []string{"hostile"}}})
		expect(t, got, 201, nil)
		token := got.JSON["token"].(string)
		expect(t, asToken(t, h, token, req{Method: "GET", Path: "/api/directory/HOSTILE_ECHO"}), 200, nil)
		expect(t, alice.do(t, req{Method: "PATCH", Path: "/api/people/" + erinID, Body: map[string]any{"disabled": true}}), 200, nil)
		expect(t, asToken(t, h, token, req{Method: "GET", Path: "/api/directory/HOSTILE_ECHO"}), 401, map[string]any{"error": "unauthorized"})
		expect(t, asToken(t, h, token, req{Method: "POST", Path: "/api/dispatch", Body: map[string]any{"key": "HOSTILE_ECHO"}}), 401,
			map[string]any{"error": "unauthorized"})
		expect(t, erin.do(t, req{Method: "GET", Path: "/api/me"}), 401, map[string]any{"error": "unauthorized"})
		// Signing in again at the provider does not bring them back.
		b, callback := beginSignIn(t, h.URL, "erin")
		signInRefused(t, b, callback, "signin_failed:disabled")
	})
}

// With ROWCALL_OWNER_KEY_LOOPBACK_ONLY on, the owner key is accepted from a
// loopback address only: behind a proxy that says where a request came
// from (ROWCALL_TRUST_FORWARDED), a key sent from elsewhere is no
// credential (401, as for a wrong key), while a person's session still
// works; with it off, the same request is the owner's.
func TestOwnerKeyLoopbackOnly(t *testing.T) {
	p := startIDP(t)
	from := func(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr} }
	for _, c := range []struct {
		setting string
		remote  int
	}{{"on", 401}, {"", 200}} {
		h := startHost(t, []string{"--trust-forwarded"}, append(p.Env(), "ROWCALL_OWNER_KEY_LOOPBACK_ONLY="+c.setting)...)
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory"}), 200, nil)
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory", Header: from("127.0.0.1")}), 200, nil)
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory", Header: from("::1")}), 200, nil)
		got := h.do(t, req{Method: "GET", Path: "/api/directory", Header: from("203.0.113.7")})
		expect(t, got, c.remote, nil)
		if c.remote == 401 {
			expect(t, got, 401, map[string]any{"error": "unauthorized"})
			expect(t, h.do(t, req{Method: "GET", Path: "/metrics", Header: from("203.0.113.7")}), 401, nil)
			alice := signIn(t, h.URL, "alice")
			expect(t, asPerson(h, alice).do(t, req{Method: "GET", Path: "/api/me", Header: from("203.0.113.7")}), 200, map[string]any{"kind": "person"})
		}
	}
	// The flag says the same as the variable.
	h := startHost(t, []string{"--trust-forwarded", "--owner-key-loopback-only"})
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory", Header: from("198.51.100.1")}), 401, nil)
}
