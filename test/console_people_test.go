package test

// The console signed in as a person (docs/people.md): the header names them
// and their role, the screens follow their rights, an admin manages people,
// and signing out ends the session on the host. The people and their
// sessions are stored straight into the host's database, as a sign-in
// through the provider stores them (sqlstore's SignedIn and StartSession),
// and the browser is given the session's cookie.
//
//	go test ./test -run 'TestConsolePeople|TestConsoleSignInWithProvider' -v

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/test/console"
)

// personSpec is one person as the provider would sign them in.
type personSpec struct {
	Name, Email, Role string
	Groups            []string
}

// addPerson stores a person in h's database as their first sign-in would:
// bound to an issuer and subject, with role (from groups when groups are
// given, else set by an admin) and every row in scope. It returns their id.
func addPerson(t testing.TB, h *host, p personSpec) string {
	t.Helper()
	id := "per_" + randomHex(8)
	groups, _ := json.Marshal(append([]string{}, p.Groups...))
	from := rowcall.RoleFromAdmin
	if len(p.Groups) > 0 {
		from = rowcall.RoleFromGroups
	}
	now := time.Now().UTC().Format(rowcall.Timestamp)
	if _, err := h.db(t).Exec(`INSERT INTO people (id, issuer, subject, email, name, role, role_from, groups, categories, created_at, seen_at)
		VALUES (?, 'https://idp.example', ?, ?, ?, ?, ?, ?, '["*"]', ?, ?)`, id, "sub-"+id, p.Email, p.Name, p.Role, from, string(groups), now, now); err != nil {
		t.Fatal(err)
	}
	return id
}

// newSession opens a session for the person, as a sign-in does
// (api.Handler.StartSession): it returns the cookie's secret, stored only
// as its SHA-256.
func newSession(t testing.TB, h *host, personID string) string {
	t.Helper()
	secret := randomHex(32)
	sum := sha256.Sum256([]byte(secret))
	now := time.Now().UTC()
	if _, err := h.db(t).Exec(`INSERT INTO sessions (id, person_id, created_at, expires_at, idle_until) VALUES (?, ?, ?, ?, ?)`,
		hex.EncodeToString(sum[:]), personID, now.Format(rowcall.Timestamp), now.Add(api.SessionMax).Format(rowcall.Timestamp),
		now.Add(api.SessionIdle).Format(rowcall.Timestamp)); err != nil {
		t.Fatal(err)
	}
	return secret
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// withCookie gives the browser the session cookie for base, as the host's
// sign-in sets it (HttpOnly, SameSite=Lax).
func withCookie(t testing.TB, ctx context.Context, base, secret string) {
	t.Helper()
	on := true
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: api.SessionCookie, Value: secret, URL: base, Path: "/",
		HTTPOnly: &on, SameSite: network.CookieSameSiteLax}); err != nil {
		t.Fatal(err)
	}
}

// personConsole opens a browser at size signed in by the person's session.
func personConsole(t testing.TB, h *host, size console.Size, secret string) context.Context {
	t.Helper()
	ctx := browser(t, size)
	withCookie(t, ctx, h.URL, secret)
	run(t, ctx, chromedp.Navigate(h.URL+"/"), console.Ready)
	return ctx
}

// meByCookie is GET /api/me with the session cookie alone.
func meByCookie(t testing.TB, h *host, secret string) resp {
	t.Helper()
	return h.do(t, req{Method: "GET", Path: "/api/me", NoAuth: true, Header: map[string]string{"Cookie": api.SessionCookie + "=" + secret}})
}

// personOf is the person id as GET /api/people lists them (asked as the owner).
func personOf(t testing.TB, h *host, id string) map[string]any {
	t.Helper()
	list := h.do(t, req{Method: "GET", Path: "/api/people"})
	expect(t, list, 200, nil)
	for _, p := range list.JSON["people"].([]any) {
		if p := p.(map[string]any); p["id"] == id {
			return p
		}
	}
	t.Fatalf("GET /api/people does not list %s: %s", id, list.Raw)
	return nil
}

// visibleNav lists the navigation's links a person sees.
func visibleNav(t testing.TB, ctx context.Context) string {
	t.Helper()
	return strings.Join(js[[]string](t, ctx, `[...document.querySelectorAll('#nav a')].filter(a => !a.hidden && !document.getElementById('nav').hidden).map(a => a.textContent)`), ",")
}

func TestConsolePeople(t *testing.T) {
	h := startHost(t, []string{"--no-examples=false"})
	olive := addPerson(t, h, personSpec{Name: "Olive Owner", Email: "olive@example.com", Role: "owner"})
	ada := addPerson(t, h, personSpec{Name: "Ada Lovelace", Email: "ada@example.com", Role: "admin"})
	ed := addPerson(t, h, personSpec{Name: "Ed Itor", Email: "ed@example.com", Role: "editor", Groups: []string{"tools-editors"}})
	vi := addPerson(t, h, personSpec{Email: "vi@example.com", Role: "viewer"})
	carl := addPerson(t, h, personSpec{Name: "Carl Caller", Email: "carl@example.com", Role: "caller"})
	nora := addPerson(t, h, personSpec{Name: "Nora None", Email: "nora@example.com"})
	adaSecret := newSession(t, h, ada)
	row := func(id string) string { return `#people tr[data-person="` + id + `"]` }
	said := func(id string) string { return `#people tr.msg[data-for="` + id + `"]` }

	t.Run("admin", func(t *testing.T) {
		ctx := personConsole(t, h, console.Laptop, adaSecret)
		if got := textOf(t, ctx, "#whoname") + "|" + textOf(t, ctx, "#whorole"); got != "Ada Lovelace|admin" {
			t.Fatalf("the header names %q, want Ada Lovelace|admin", got)
		}
		if got := visibleNav(t, ctx); got != "Directory,New row,Tokens,Modules,Approvals,Learned,People" {
			t.Fatalf("an admin's navigation shows %s", got)
		}
		if got := js[string](t, ctx, `sessionStorage.getItem('rowcall.secret') || ''`); got != "" {
			t.Fatalf("a person's console holds a key: %q", got)
		}
		if got := textOf(t, ctx, "#range"); !strings.Contains(got, "of 9") {
			t.Fatalf("the directory, with the cookie alone, shows %q", got)
		}
		n := requests(t, ctx, console.Go("#/people"))
		fewRequests(t, "the people page", n, 1)
		if got := textOf(t, ctx, row(ed)+" td.groups"); got != "tools-editors" {
			t.Fatalf("Ed's groups show as %q", got)
		}
		if got := textOf(t, ctx, row(ed)+" .role-from"); got != "from groups" {
			t.Fatalf("Ed's role shows as coming %q", got)
		}
		if got := textOf(t, ctx, row(vi)+" td.head"); got != "vi@example.com" {
			t.Fatalf("a person without a name shows as %q", got)
		}
		// Her own row: named as hers, nothing to change, and why.
		if !js[bool](t, ctx, `!!document.querySelector('`+row(ada)+` #you') && [...document.querySelectorAll('`+row(ada)+` select, `+row(ada)+` input, `+row(ada)+` button')].every(e => e.disabled)`) {
			t.Fatalf("Ada's own row offers changes: %s", js[string](t, ctx, `document.querySelector('`+row(ada)+`').outerHTML`))
		}
		if got := textOf(t, ctx, said(ada)); !strings.Contains(got, "nobody changes their own role") {
			t.Fatalf("under Ada's own row: %q", got)
		}

		// A role, then a scope.
		run(t, ctx, console.Fill(row(carl)+" select.role", "editor"), console.Click(row(carl)+" button.set-role"),
			console.Wait(`!!document.querySelector('`+said(carl)+` .notice')`))
		if got := textOf(t, ctx, said(carl)); got != "Role set to editor." {
			t.Fatalf("after setting Carl's role the page says %q", got)
		}
		if p := personOf(t, h, carl); p["role"] != "editor" || p["role_from"] != "admin" {
			t.Fatalf("Carl is %v", p)
		}
		if got := textOf(t, ctx, row(carl)+" .role-from"); got != "set by an admin" {
			t.Fatalf("Carl's role shows as coming %q", got)
		}
		run(t, ctx, console.Fill(row(carl)+" input.scope", "billing, support"), console.Click(row(carl)+" button.set-scope"),
			console.Wait(`!!document.querySelector('`+said(carl)+` .notice')`))
		if p := personOf(t, h, carl); strings.Join(toStrings(p["categories"]), ",") != "billing,support" {
			t.Fatalf("Carl's scope is %v", p["categories"])
		}

		// The owner's role holds rights an admin's does not: the host
		// refuses, and the page says why.
		run(t, ctx, console.Fill(row(olive)+" select.role", "viewer"), console.Click(row(olive)+" button.set-role"),
			console.Wait(`!!document.querySelector('`+said(olive)+` #person-error')`))
		if got := textOf(t, ctx, said(olive)); !strings.Contains(got, "forbidden") || !strings.Contains(got, "holds rights yours does not") {
			t.Fatalf("the refused change shows %q", got)
		}
		if p := personOf(t, h, olive); p["role"] != "owner" {
			t.Fatalf("Olive is %v", p)
		}

		// Disabling asks first, then ends the person's session at once.
		carlSecret := newSession(t, h, carl)
		carlCtx := personConsole(t, h, console.Laptop, carlSecret)
		if got := textOf(t, carlCtx, "#whoname"); got != "Carl Caller" {
			t.Fatalf("Carl's header says %q", got)
		}
		run(t, ctx, console.Click(row(carl)+" button.disable"), console.Wait(`!!document.querySelector('`+said(carl)+` button.confirm')`))
		if got := textOf(t, ctx, said(carl)); !strings.Contains(got, "Disable Carl Caller?") {
			t.Fatalf("the confirmation says %q", got)
		}
		if p := personOf(t, h, carl); p["disabled_at"] != nil {
			t.Fatalf("Carl is disabled before the confirmation: %v", p)
		}
		run(t, ctx, console.Click(said(carl)+" button.confirm"), console.Wait(`!!document.querySelector('`+row(carl)+` button.enable')`))
		if p := personOf(t, h, carl); p["disabled_at"] == nil {
			t.Fatalf("Carl is not disabled: %v", p)
		}
		if got := textOf(t, ctx, row(carl)+" td.state"); !strings.HasPrefix(got, "disabled ") {
			t.Fatalf("Carl's state shows %q", got)
		}
		run(t, carlCtx, console.Go("#/dir?type=fn"))
		if got := textOf(t, carlCtx, "#signed-out"); !strings.Contains(got, "Your session has ended") {
			t.Fatalf("Carl's console, after he was disabled, shows %q", textOf(t, carlCtx, "#view"))
		}
		run(t, ctx, console.Click(row(carl)+" button.enable"), console.Wait(`!!document.querySelector('`+said(carl)+` button.confirm')`),
			console.Click(said(carl)+" button.confirm"), console.Wait(`!!document.querySelector('`+row(carl)+` button.disable')`))
		if p := personOf(t, h, carl); p["disabled_at"] != nil {
			t.Fatalf("Carl is still disabled: %v", p)
		}
		expect(t, meByCookie(t, h, carlSecret), 401, nil) // what was revoked stays revoked
		unbroken(t, ctx, "#/people")

		// Signing out ends the session on the host.
		run(t, ctx, console.Then(console.Click("#signout")))
		if got := textOf(t, ctx, "main h1"); got != "Sign in" {
			t.Fatalf("after signing out the console shows %q", got)
		}
		if js[bool](t, ctx, `document.getElementById('nav').hidden === false`) || textOf(t, ctx, "#who") != "" {
			t.Fatalf("after signing out the header shows %q", textOf(t, ctx, "header"))
		}
		expect(t, meByCookie(t, h, adaSecret), 401, nil)
		run(t, ctx, chromedp.Navigate(h.URL+"/#/people"), console.Ready)
		if got := textOf(t, ctx, "main h1"); got != "Sign in" {
			t.Fatalf("opened again after signing out, the console shows %q", got)
		}
	})

	t.Run("editor", func(t *testing.T) {
		_, ownerToken, _ := mint(t, h, map[string]any{"name": "the owner's", "categories": []string{"*"}})
		ctx := personConsole(t, h, console.Laptop, newSession(t, h, ed))
		if got := textOf(t, ctx, "#whoname") + "|" + textOf(t, ctx, "#whorole"); got != "Ed Itor|editor" {
			t.Fatalf("the header names %q", got)
		}
		if got := visibleNav(t, ctx); got != "Directory,New row,Tokens,Modules,Learned" {
			t.Fatalf("an editor's navigation shows %s", got)
		}
		run(t, ctx, console.Go("#/people"))
		if got := textOf(t, ctx, "#view-error"); !strings.Contains(got, "role_forbids:editor:people") || !strings.Contains(got, "does not hold the right people") {
			t.Fatalf("an editor opening People sees %q", textOf(t, ctx, "#view"))
		}
		// An editor writes rows, from the session alone.
		run(t, ctx, console.Go("#/new"), console.Fill("#f_key", "ZZ_BY_ED"), console.Fill("#f_type", "http"), console.Fill("#f_target", "GET $SELF/api/directory/NOW"),
			console.Fill("#f_content", "# WHAT: Read NOW's row, written by Ed."), console.Then(console.Click("#save")))
		if got := textOf(t, ctx, "#capability"); got != "Read NOW's row, written by Ed." {
			t.Fatalf("after saving the page shows %q", textOf(t, ctx, "#view"))
		}
		// Tokens: minted from the session, his, and only his listed.
		run(t, ctx, console.Go("#/tokens"))
		if got := textOf(t, ctx, "#tokens-whose"); !strings.Contains(got, "(editor)") || !strings.Contains(got, "your own tokens") {
			t.Fatalf("the tokens page says %q", got)
		}
		run(t, ctx, console.Fill("#t_name", "ed's agent"), console.Fill("#t_categories", "*"), console.Click("#mint"), console.Wait(`!!document.getElementById('minted-id')`))
		id := textOf(t, ctx, "#minted-id")
		expect(t, h.do(t, req{Method: "GET", Path: "/api/tokens/" + id}), 200, map[string]any{"person": ed, "name": "ed's agent"})
		if got := js[[]string](t, ctx, `[...document.querySelectorAll('#tokens tr[data-token]')].map(tr => tr.dataset.token)`); strings.Join(got, ",") != id {
			t.Fatalf("Ed's token list shows %v, want only %s (not the owner's %s)", got, id, ownerToken)
		}
	})

	t.Run("viewer", func(t *testing.T) {
		ctx := personConsole(t, h, console.Laptop, newSession(t, h, vi))
		if got := textOf(t, ctx, "#whoname") + "|" + textOf(t, ctx, "#whorole"); got != "vi@example.com|viewer" {
			t.Fatalf("the header names %q", got)
		}
		if got := visibleNav(t, ctx); got != "Directory,Modules" {
			t.Fatalf("a viewer's navigation shows %s", got)
		}
		if js[bool](t, ctx, `!!document.querySelector('#view a[href="#/new"]')`) {
			t.Fatal("the directory offers a viewer a new row")
		}
		run(t, ctx, console.Go("#/row/NOW"))
		if got := js[[]string](t, ctx, `[...document.querySelectorAll('#view .actions a')].map(a => a.textContent)`); strings.Join(got, ",") != "History" {
			t.Fatalf("a row offers a viewer %v", got)
		}
		run(t, ctx, console.Go("#/modules"))
		if js[bool](t, ctx, `!!document.getElementById('upload-form')`) {
			t.Fatal("the modules page offers a viewer an upload")
		}
		run(t, ctx, console.Go("#/call/NOW"))
		if !js[bool](t, ctx, `document.getElementById('run').disabled && document.getElementById('shape').disabled`) || !strings.Contains(textOf(t, ctx, "#lacks"), "Your role (viewer) does not hold the right call") {
			t.Fatalf("the call page offers a viewer %q", textOf(t, ctx, "#view"))
		}
		// Sent anyway, a write is refused by the host, and the page says so.
		run(t, ctx, console.Go("#/edit/NOW"))
		if got := textOf(t, ctx, "#lacks"); !strings.Contains(got, "does not hold the right write") {
			t.Fatalf("the edit page tells a viewer %q", got)
		}
		run(t, ctx, console.Fill("#f_category", "mine"), console.Click("#save"), console.Wait(`document.getElementById('form-status').innerText !== ''`))
		if got := textOf(t, ctx, "#form-status"); !strings.Contains(got, "role_forbids:viewer:write") || !strings.Contains(got, "How to fix") {
			t.Fatalf("the refused write shows %q", got)
		}
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/NOW"}), 200, map[string]any{"category": "time"})
	})

	t.Run("no-role", func(t *testing.T) {
		ctx := personConsole(t, h, console.Laptop, newSession(t, h, nora))
		if got := textOf(t, ctx, "#whorole"); got != "no role" {
			t.Fatalf("the header says the role is %q", got)
		}
		if got := textOf(t, ctx, "#no-role"); !strings.Contains(got, "Nora None") || !strings.Contains(got, "no role on this host") {
			t.Fatalf("a person with no role sees %q", textOf(t, ctx, "#view"))
		}
		if got := visibleNav(t, ctx); got != "" {
			t.Fatalf("a person with no role sees the navigation %s", got)
		}
	})

	t.Run("phone", func(t *testing.T) {
		ctx := personConsole(t, h, console.Phone, newSession(t, h, ada))
		for _, hash := range []string{"#/dir", "#/people", "#/tokens"} {
			run(t, ctx, console.Go(hash))
			if w := js[int](t, ctx, `document.documentElement.scrollWidth`); w > int(console.Phone.Width) {
				t.Errorf("%s is %d px wide on a %d px phone", hash, w, console.Phone.Width)
			}
			unbroken(t, ctx, "")
			if hash != "#/people" {
				continue
			}
			if w := js[float64](t, ctx, `Math.max(...[...document.querySelectorAll('#people tbody tr')].map(tr => tr.getBoundingClientRect().right))`); w > float64(console.Phone.Width) {
				t.Errorf("a person's card reaches %.0f px on a %d px phone", w, console.Phone.Width)
			}
		}
	})
}

// clickAway clicks a link that leaves the page: the click's own answer may
// be lost with the page it was made on.
func clickAway(css string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := console.Click(css)(ctx, t)
		if err != nil && strings.Contains(err.Error(), "Inspected target navigated or closed") {
			err = nil
		}
		return chromedp.Void{}, err
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestConsoleSignInWithProvider: with a provider named, the sign-in screen
// offers "Sign in with <provider>" above the owner key, and its link comes
// back to the very page it left, fragment and all: an MCP client's OAuth
// consent, opened signed out, is answered by the person after signing in
// through the real provider's pages, and the token it mints is theirs. On
// a host and inside a tenant, whose console sends return_to relative to its
// /t/NAME/ base.
func TestConsoleSignInWithProvider(t *testing.T) {
	p := startIDP(t)
	for _, b := range backends {
		if b.Name == "embedded" || b.Name == "tenant" {
			t.Run(b.Name, func(t *testing.T) { consoleSignInWithProvider(t, p, b.Start(t, p.Env()).host) })
		}
	}
}

func consoleSignInWithProvider(t *testing.T, p *idp, h *host) {
	base := h.URL
	c := newBrowserClient(t, h, "Carol's Agent", "st-p")
	ctx := browser(t, console.Laptop)
	run(t, ctx, chromedp.Navigate(base+"/oauth/authorize?"+c.query.Encode()), console.Ready)
	hash := js[string](t, ctx, `location.hash`)
	if !strings.HasPrefix(hash, "#/consent/") {
		t.Fatalf("the authorization request opened %q", hash)
	}
	if got := textOf(t, ctx, "#signin-provider"); got != "Sign in with Test IdP" {
		t.Fatalf("the sign-in screen offers %q", textOf(t, ctx, "#view"))
	}
	if want := base + "/login?return_to=" + url.QueryEscape("/"+hash); js[string](t, ctx, `document.getElementById('signin-provider').href`) != want {
		t.Fatalf("the provider's link is %s, want %s", js[string](t, ctx, `document.getElementById('signin-provider').href`), want)
	}
	if !js[bool](t, ctx, `document.activeElement === document.getElementById('signin-provider') && !!document.querySelector('form.signin #secret')`) {
		t.Fatal("the sign-in screen does not lead with the provider over the owner key's field")
	}
	run(t, ctx, clickAway("#signin-provider"))
	run(t, ctx, settle(`document.readyState === 'complete' && !!document.querySelector('input[name=login]')`))
	run(t, ctx, console.Fill(`input[name=login]`, "carol"), console.Fill(`input[name=password]`, "any password"))
	run(t, ctx, submit)
	run(t, ctx, settle(`document.readyState === 'complete' && !document.querySelector('input[name=login]') && !!document.querySelector('button[type=submit]')`))
	run(t, ctx, submit)
	run(t, ctx, settle(`location.origin + location.pathname === `+strconv.Quote(base+"/")+` && !!document.getElementById('consent-client')`))
	if got := js[string](t, ctx, `location.hash`); got != hash {
		t.Fatalf("after signing in the console shows %s, want %s", got, hash)
	}
	if got := textOf(t, ctx, "#whoname") + "|" + textOf(t, ctx, "#whorole"); got != "Carol Caller|caller" {
		t.Fatalf("the header names %q", got)
	}
	carol, _ := awaited[map[string]any](t, ctx, `fetch('api/me').then(r => r.json())`)["person"].(map[string]any)["id"].(string)
	if got := textOf(t, ctx, "#consent-client"); got != "Carol's Agent" {
		t.Fatalf("the consent names %q", got)
	}
	run(t, ctx, console.Fill("#c_categories", "*"), console.Click("#consent-approve"))
	c.redeem(t, c.callback(t, ctx))
	list := h.do(t, req{Method: "GET", Path: "/api/tokens"})
	found := false
	for _, x := range list.JSON["tokens"].([]any) {
		if x := x.(map[string]any); x["client"] == c.id {
			found = x["person"] == carol
		}
	}
	if !found {
		t.Fatalf("the consented token is not Carol's (%s): %s", carol, list.Raw)
	}
}
