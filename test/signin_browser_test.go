package test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/rowcall/rowcall/test/console"
)

// A person signs in in a real Chromium: the host's /login takes the browser
// to the provider's own login and consent pages, and back to the console,
// where the page's own requests carry the session cookie: GET /api/me names
// the person with the role their groups map to, and a write from the page
// (its Origin the host's) is theirs.
func TestSignInBrowser(t *testing.T) {
	p := startIDP(t)
	h := startHost(t, nil, p.Env()...)
	ctx := browser(t, console.Laptop)
	// Each step waits for the page it acts on: the provider's pages load
	// after redirects. A button that submits is clicked from a task of the
	// page's own, so the navigation it starts does not cut the evaluation
	// short.
	run(t, ctx, chromedp.Navigate(h.URL+"/login?return_to=/"))
	run(t, ctx, console.Wait(`!!document.querySelector('input[name=login]') && document.readyState === 'complete'`))
	run(t, ctx, console.Fill(`input[name=login]`, "alice"), console.Fill(`input[name=password]`, "any password"))
	run(t, ctx, submit)
	run(t, ctx, settle(`document.readyState === 'complete' && !document.querySelector('input[name=login]') && !!document.querySelector('button[type=submit]')`))
	run(t, ctx, submit)
	run(t, ctx, settle(`location.origin === `+strconv.Quote(h.URL)+` && location.pathname === '/'`), console.Ready)
	me := awaited[map[string]any](t, ctx, `fetch('/api/me').then(r => r.json())`)
	person, _ := me["person"].(map[string]any)
	if me["kind"] != "person" || person["subject"] != "alice" || person["issuer"] != p.Issuer || person["role"] != "admin" || person["email"] != "alice@example.test" {
		t.Fatalf("GET /api/me from the page: %v", me)
	}
	if cookie := js[string](t, ctx, `document.cookie`); strings.Contains(cookie, "rowcall_session") {
		t.Fatalf("the session cookie is readable by the page's scripts: %q", cookie)
	}
	status := awaited[float64](t, ctx, `fetch('/api/directory', {method: 'POST', headers: {'Content-Type': 'application/json'},
		body: JSON.stringify({key: 'FROM_THE_BROWSER', type: 'http', target: 'GET https://api.example.test/', content: '# WHAT: written from the page'})}).then(r => r.status)`)
	if status != 201 {
		t.Fatalf("a write from the console's page answered %v", status)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/FROM_THE_BROWSER"}), 200, nil)
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
