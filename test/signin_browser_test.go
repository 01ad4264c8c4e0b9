package test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/rowcall/rowcall/internal/testenv"
	"github.com/rowcall/rowcall/test/console"
)

// TestPersonInBrowser: a person signs in in a real Chromium through the
// real OpenID provider, on the embedded host, sqld, the worker in workerd
// and inside a tenant (under its /t/NAME/): the host's /login takes the
// browser to the provider's own login and consent pages, and back to the
// console, which names them with the role their groups map to (bob:
// editor). The page's own requests carry the session cookie, which its
// scripts cannot read; a row written from the page is theirs. An admin
// narrows them to the tools rows; the MCP Inspector's OAuth sign-in
// (TestOAuthMCPInspector's) is then consented in that browser by the
// person, who is refused a wider scope, and the token names them.
//
//	go test ./test -run 'TestPersonInBrowser/worker'
func TestPersonInBrowser(t *testing.T) {
	dir := testenv.NPM(t, "mcpinspector", filepath.Join("node_modules", "@modelcontextprotocol", "inspector", "package.json"))
	p := startIDP(t)
	for _, b := range backends {
		if b.Name == "inprocess" {
			continue
		}
		t.Run(b.Name, func(t *testing.T) {
			tg := b.Start(t, p.Env())
			mcpRows(t, tg.host)
			ctx := browser(t, console.Laptop)
			person := browserSignIn(t, ctx, tg.host, p, "bob", "Bob Editor", "editor")
			expect(t, tg.host.do(t, req{Method: "PATCH", Path: "/api/people/" + person["id"].(string), Body: map[string]any{"categories": []string{"tools"}}}),
				200, map[string]any{"ok": true})
			inspectorSignIn(t, ctx, dir, tg, person)
		})
	}
}

// browserSignIn signs account in at h in the browser ctx through p's pages,
// checks that the console names them (name) with role, that the session
// cookie is not the page's to read, and that a row written from the page is
// written by them; it returns the person (GET /api/me's).
func browserSignIn(t *testing.T, ctx context.Context, h *host, p *idp, account, name, role string) map[string]any {
	t.Helper()
	// Each step waits for the page it acts on: the provider's pages load
	// after redirects. A button that submits is clicked from a task of the
	// page's own, so the navigation it starts does not cut the evaluation
	// short.
	run(t, ctx, chromedp.Navigate(h.URL+"/login?return_to=/"))
	run(t, ctx, console.Wait(`!!document.querySelector('input[name=login]') && document.readyState === 'complete'`))
	run(t, ctx, console.Fill(`input[name=login]`, account), console.Fill(`input[name=password]`, "any password"))
	run(t, ctx, submit)
	run(t, ctx, settle(`document.readyState === 'complete' && !document.querySelector('input[name=login]') && !!document.querySelector('button[type=submit]')`))
	run(t, ctx, submit)
	run(t, ctx, settle(`location.origin + location.pathname === `+strconv.Quote(h.URL+"/")), console.Ready,
		console.Wait(`(document.getElementById('whoname') || {}).innerText === `+strconv.Quote(name)+
			` && document.getElementById('whorole').innerText === `+strconv.Quote(role)))
	// The page's own requests, relative to it: under its base.
	me := awaited[map[string]any](t, ctx, `fetch('api/me').then(r => r.json())`)
	person, _ := me["person"].(map[string]any)
	if me["kind"] != "person" || person["subject"] != account || person["issuer"] != p.Issuer || person["role"] != role || person["email"] != account+"@example.test" {
		t.Fatalf("GET /api/me from the page: %v", me)
	}
	if cookie := js[string](t, ctx, `document.cookie`); strings.Contains(cookie, "rowcall_session") {
		t.Fatalf("the session cookie is readable by the page's scripts: %q", cookie)
	}
	key := "FROM_THE_BROWSER_" + strings.ToUpper(account)
	status := awaited[float64](t, ctx, `fetch('api/directory', {method: 'POST', headers: {'Content-Type': 'application/json'},
		body: JSON.stringify({key: '`+key+`', type: 'http', category: 'tools', target: 'GET https://api.example.test/', content: '# WHAT: written from the page'})}).then(r => r.status)`)
	if status != 201 {
		t.Fatalf("a write from the console's page answered %v", status)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/" + key}), 200, map[string]any{"written_by": "person:" + person["id"].(string)})
	return person
}

// settle waits until expr is truthy in the page, across the navigations
// (redirects through the provider and back) that replace the page under the
// poll: console.Wait, polled again when Chromium says the page it polled
// navigated away.
func settle(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		for {
			_, err := console.Wait(expr)(ctx, tg)
			if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "navigated or closed") {
				return chromedp.Void{}, err
			}
		}
	}
}

// submit clicks the page's submit button.
var submit = chromedp.Evaluate[chromedp.Void](`setTimeout(() => document.querySelector('button[type=submit]').click(), 0)`)

// awaited evaluates expr in the page and waits for the promise it returns.
func awaited[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}
