package test

// The web console (api/console) in a real headless Chromium (Debian's
// chromium, driven by chromedp through test/console) against real hosts:
// the embedded host for every screen, the worker in workerd for sign-in and
// the call path. Each step does what a person would and checks what they
// would see; the request counts are the console's promise that a page needs
// a few API requests to show itself.
//
//	go test ./test -run 'TestConsole' -v
//	go test ./test -run '^$' -bench BenchmarkConsoleFirstScreen -benchtime 20x

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rowcall/rowcall/internal/rowgen"
	"github.com/rowcall/rowcall/test/console"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// browser starts a headless Chromium for one test, or fails (under CI) or
// skips (elsewhere) when none is installed.
func browser(t testing.TB, size console.Size) context.Context {
	t.Helper()
	ctx, cancel, err := console.Browser(context.Background(), size)
	if errors.Is(err, console.ErrNoChromium) {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip("SKIPPED, NOT PASSED: ", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelT)
	return ctx
}

// run does steps in the page, failing with what the page shows.
func run(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + '\n' + document.getElementById('view').innerText`))
		t.Fatalf("%v\nthe page shows %s", err, shown)
	}
}

// js evaluates expr in the page.
func js[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func textOf(t testing.TB, ctx context.Context, css string) string {
	t.Helper()
	return js[string](t, ctx, `(document.querySelector(`+strconv.Quote(css)+`) || {innerText: ''}).innerText`)
}

// requests shows a view and returns how many API requests it made.
func requests(t testing.TB, ctx context.Context, show chromedp.Action[chromedp.Void]) int {
	t.Helper()
	run(t, ctx, console.ClearRequests, show)
	n, err := chromedp.Run(ctx, console.APIRequests)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func fewRequests(t testing.TB, page string, n, most int) {
	t.Helper()
	t.Logf("%s: %d API requests", page, n)
	if n > most {
		t.Errorf("%s made %d API requests to show itself, want at most %d", page, n, most)
	}
}

// unbroken shows the view at hash (or stays on the view shown, for "") and
// fails the test for each word of a table cell (or card) drawn split across
// lines (console.BrokenWords).
func unbroken(t testing.TB, ctx context.Context, hash string) {
	t.Helper()
	if hash != "" {
		run(t, ctx, console.Go(hash))
	}
	broken, err := chromedp.Run(ctx, console.BrokenWords)
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) > 0 {
		t.Errorf("%s breaks words inside table cells: %q", hash, broken)
	}
}

// longKey is a row key wider than a phone.
const longKey = "ZZ_A_VERY_LONG_KEY_THAT_NO_COLUMN_IS_WIDE_ENOUGH_TO_HOLD_ON_ONE_LINE_OF_A_PHONE"

func TestConsole(t *testing.T) {
	h := startHost(t, append([]string{"--no-examples=false"}, allowLoopback...))
	ctx := browser(t, console.Laptop)

	t.Run("signin", func(t *testing.T) {
		run(t, ctx, chromedp.Navigate(h.URL+"/"), console.Ready)
		if got := textOf(t, ctx, "main h1"); got != "Sign in" {
			t.Fatalf("the console opens on %q, want the sign-in form", got)
		}
		run(t, ctx, console.Fill("#secret", "rk_not_the_key"), console.Click("form.signin button[type=submit]"), console.Wait(`!!document.getElementById('signin-error')`))
		if got := textOf(t, ctx, "#signin-error"); !strings.Contains(got, "not accepted") {
			t.Fatalf("a wrong key shows %q", got)
		}
		n := requests(t, ctx, console.SignInHere(h.Key))
		fewRequests(t, "sign-in and the first directory page", n, 4)
		if got := textOf(t, ctx, "#range"); !strings.Contains(got, "of 9") {
			t.Fatalf("the directory shows %q, want the 9 example rows", got)
		}
		if got := textOf(t, ctx, "#whoami"); !strings.Contains(got, "owner key") {
			t.Fatalf("the header says %q", got)
		}
		if href := js[string](t, ctx, `location.href`); strings.Contains(href, h.Key) {
			t.Fatalf("the owner key is in the URL: %s", href)
		}
		if got := js[string](t, ctx, `sessionStorage.getItem('rowcall.secret')`); got != h.Key {
			t.Fatalf("sessionStorage holds %q", got)
		}
		n = requests(t, ctx, console.Go("#/dir?type=fn"))
		fewRequests(t, "a directory page", n, 1)
		if got := textOf(t, ctx, "#rows"); !strings.Contains(got, "NOW") || strings.Contains(got, "DIR_GET") {
			t.Fatalf("type=fn lists %q", got)
		}
	})

	t.Run("ask", func(t *testing.T) {
		run(t, ctx, console.Go("#/dir"), console.Fill("#ask", "what time is it"), console.Then(console.Click("#ask-go")))
		if got := textOf(t, ctx, "#matches li:first-child"); !strings.HasPrefix(got, "NOW") {
			t.Fatalf("the first match is %q, want NOW", got)
		}
		n := requests(t, ctx, console.Then(console.Click("#matches li:first-child a")))
		fewRequests(t, "a row's contract page", n, 2)
		if got := textOf(t, ctx, "#capability"); !strings.Contains(got, "current time") {
			t.Fatalf("NOW's contract says %q", got)
		}
		if got := textOf(t, ctx, "#contract"); !strings.Contains(got, "contract_sha256") || !strings.Contains(got, "[NOW][/NOW]") {
			t.Fatalf("NOW's contract document shows %q", got)
		}
	})

	t.Run("create", func(t *testing.T) {
		run(t, ctx, console.Go("#/new"), console.Fill("#f_key", "ZZ_CONSOLE"), console.Fill("#f_type", "http"),
			console.Fill("#f_target", "GET $SELF/api/directory/$1"), console.Fill("#f_category", "console"),
			console.Click("#save"), console.Wait(`document.getElementById('err-content').innerText !== ''`))
		got := textOf(t, ctx, "#err-content")
		if !strings.Contains(got, "registry_hygiene_refused: missing_description") || !strings.Contains(got, "How to fix") {
			t.Fatalf("beside content the form shows %q", got)
		}
		if js[string](t, ctx, `document.getElementById('f_content').getAttribute('aria-invalid')`) != "true" {
			t.Fatal("the content field is not marked invalid")
		}
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/ZZ_CONSOLE"}), 404, nil)
		run(t, ctx, console.Click("#doc-template"), console.Wait(`document.getElementById('f_content').value.includes('# WHAT: ')`),
			console.Fill("#f_content", "# WHAT: Read one row, from the console test.\n# ARGS: $1=key\n# EX: [ZZ_CONSOLE]NOW[/ZZ_CONSOLE]"),
			console.Then(console.Click("#save")))
		if got := textOf(t, ctx, "#capability"); got != "Read one row, from the console test." {
			t.Fatalf("after the fix the row page says %q", got)
		}
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/ZZ_CONSOLE"}), 200, map[string]any{"category": "console", "version": float64(1)})
	})

	t.Run("conflict", func(t *testing.T) {
		run(t, ctx, console.Go("#/edit/ZZ_CONSOLE"))
		// Someone else saves version 2 while the form holds version 1.
		expect(t, h.do(t, req{Method: "PATCH", Path: "/api/directory/ZZ_CONSOLE", Body: map[string]any{"category": "theirs"}}), 200, nil)
		mine := "# WHAT: Read one row, from the console test.\n# WHEN_TO_USE: the conflict test.\n# ARGS: $1=key\n# EX: [ZZ_CONSOLE]NOW[/ZZ_CONSOLE]"
		run(t, ctx, console.Fill("#f_content", mine), console.Click("#save"), console.Wait(`!!document.getElementById('conflict')`))
		got := textOf(t, ctx, "#conflict")
		if !strings.Contains(got, "version 2") || !strings.Contains(textOf(t, ctx, `#conflict tr[data-field=category]`), "theirs") ||
			!strings.Contains(textOf(t, ctx, `#conflict tr[data-field=content]`), "WHEN_TO_USE") {
			t.Fatalf("the conflict shows %q", got)
		}
		unbroken(t, ctx, "")
		run(t, ctx, console.Then(console.Click("#merge")))
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/ZZ_CONSOLE"}), 200, map[string]any{"category": "theirs", "content": mine, "version": float64(3)})
	})

	t.Run("history", func(t *testing.T) {
		n := requests(t, ctx, console.Go("#/history/ZZ_CONSOLE"))
		fewRequests(t, "a row's history", n, 1)
		if got := textOf(t, ctx, "#history li:first-child [data-field=content] ins"); !strings.Contains(got, "WHEN_TO_USE: the conflict test") {
			t.Fatalf("version 3's diff adds %q", got)
		}
		if got := textOf(t, ctx, "#history li:nth-child(2) [data-field=category]"); !strings.Contains(got, "− console") || !strings.Contains(got, "+ theirs") {
			t.Fatalf("version 2's diff shows %q", got)
		}
		// Each version names who wrote it: the console sends the owner key as
		// a bearer token, the test's PATCH as x-terminal-key.
		for i, want := range []string{"by owner:bearer", "by owner:terminal-key", "by owner:bearer"} {
			if got := textOf(t, ctx, "#history li:nth-child("+strconv.Itoa(i+1)+") h2"); !strings.HasSuffix(got, want) {
				t.Fatalf("version %d's heading is %q, want it to end %q", 3-i, got, want)
			}
		}
		// The insert shows what it set, with nothing removed.
		if got := textOf(t, ctx, "#history li:last-child [data-field=category]"); got != "+ console" {
			t.Fatalf("version 1 (the insert) shows its category as %q, want + console", got)
		}
		if n := js[int](t, ctx, `document.querySelectorAll('#history li:last-child del').length`); n != 0 {
			t.Fatalf("the insert shows %d removed lines: %s", n, textOf(t, ctx, "#history li:last-child"))
		}
	})

	var stepReceipts []string
	t.Run("call", func(t *testing.T) {
		n := requests(t, ctx, console.Go("#/call/ROW_DOSSIER"))
		fewRequests(t, "the call form", n, 1)
		run(t, ctx, console.Fill("#call-body", "NOW"), console.Click("#shape"), console.Wait(`!!document.getElementById('shape-steps')`))
		if got := textOf(t, ctx, "#shape-steps"); !strings.Contains(got, "DIR_GET: $1 ⇒ ROW") || !strings.Contains(got, "DIR_HISTORY: $1 ⇒ HISTORY") || !strings.Contains(got, "in parallel") {
			t.Fatalf("the shape shows %q", got)
		}
		if got := js[string](t, ctx, `document.getElementById('call-status').dataset.ran`); got != "false" {
			t.Fatalf("a shape preview ran: %s", got)
		}
		run(t, ctx, console.Click("#run"), console.Wait(`!!document.getElementById('trace-tree')`))
		// Each step's answer is its HTTP status over its body, the body
		// indented JSON with no escaped JSON in it; the raw text is one click
		// away.
		for _, step := range []string{"ROW", "HISTORY"} {
			dd := `#result dd[data-step=` + step + `]`
			if got := textOf(t, ctx, dd+` .http-status`); got != "HTTP 200" {
				t.Fatalf("the flow's %s answer shows the status %q; the result: %s", step, got, textOf(t, ctx, "#result"))
			}
			if got := textOf(t, ctx, dd+` pre`); !strings.Contains(got, "\n  \"key\": \"NOW\"") || strings.Contains(got, `{\"`) {
				t.Fatalf("the flow's %s body is not pretty JSON: %q", step, got)
			}
		}
		if got := textOf(t, ctx, "#result"); strings.Contains(got, `{\"`) || strings.Contains(got, "HTTP 200:{") {
			t.Fatalf("the result shows escaped JSON before the raw text is asked for: %q", got)
		}
		run(t, ctx, console.Click("#result details.raw summary"), console.Wait(`document.querySelector('#result details.raw').open`))
		if got := textOf(t, ctx, "#result .raw-result"); !strings.Contains(got, `"ROW":"HTTP 200:{\"key\":\"NOW\"`) {
			t.Fatalf("the raw result shows %q", got)
		}
		top := js[[]string](t, ctx, `[...document.querySelectorAll('#trace-tree > li')].map(li => li.firstChild.textContent)`)
		steps := js[[]string](t, ctx, `[...document.querySelectorAll('#trace-tree > li > ul > li')].map(li => li.firstChild.textContent).sort()`)
		if strings.Join(top, ",") != "ROW_DOSSIER" || strings.Join(steps, ",") != "DIR_GET,DIR_HISTORY" {
			t.Fatalf("the trace tree is %v over %v, want ROW_DOSSIER over DIR_GET, DIR_HISTORY", top, steps)
		}
		stepReceipts = js[[]string](t, ctx, `[...document.querySelectorAll('#trace-tree li')].map(li => li.dataset.receipt)`)
		trace := textOf(t, ctx, "#call-status code")
		for i, id := range stepReceipts {
			if i > 0 { // the trace's own page, as the receipt page links it
				run(t, ctx, console.Go("#/trace/"+trace))
			}
			n := requests(t, ctx, console.Then(console.Click(`#trace-tree li[data-receipt="`+id+`"] > a.receipt-link`)))
			fewRequests(t, "a receipt page", n, 2)
			if got := textOf(t, ctx, "#rc-h"); got != "Receipt "+id {
				t.Fatalf("the receipt link opened %q", got)
			}
			if js[string](t, ctx, `document.getElementById('browser-verdict').dataset.verified`) != "true" {
				t.Fatalf("receipt %s does not verify in the browser: %s", id, textOf(t, ctx, "#checks"))
			}
		}
	})

	t.Run("typed", func(t *testing.T) {
		schema := `{"type":"object","properties":{"key":{"type":"string","description":"the row to read"},"part":{"type":"string","enum":["history","row"]}},"required":["key"]}`
		expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": "ZZ_TYPED", "type": "http",
			"target": "GET $SELF/api/directory/$1", "auth": "bearer:ROWCALL_OWNER_KEY", "content": "# WHAT: Read one row, typed.", "input_schema": schema}}), 201, nil)
		run(t, ctx, console.Go("#/call/ZZ_TYPED"))
		if got := js[[]string](t, ctx, `[...document.querySelectorAll('#call-form label')].map(l => l.innerText)`); len(got) != 2 ||
			!strings.HasPrefix(got[0], "key (required)") || !strings.HasPrefix(got[1], "part") {
			t.Fatalf("the form from input_schema has labels %q; the page: %s", got, textOf(t, ctx, "#view"))
		}
		run(t, ctx, console.Fill("#arg_0", "NOW"), console.Click("#shape"), console.Wait(`!!document.getElementById('shape-request')`))
		if got := textOf(t, ctx, "#shape-request"); got != "GET "+h.URL+"/api/directory/NOW" {
			t.Fatalf("the typed call's shape is %q", got)
		}
		run(t, ctx, console.Click("#run"), console.Wait(`!!document.getElementById('trace-tree')`))
		if got := textOf(t, ctx, "#result"); !strings.HasPrefix(got, "HTTP 200\n") || !strings.Contains(got, "\n  \"key\": \"NOW\"") {
			t.Fatalf("the typed call answered %q", got)
		}
	})

	t.Run("public", func(t *testing.T) {
		if len(stepReceipts) == 0 {
			t.Skip("the call step failed")
		}
		// The host's own receipt page, keyless, checks the receipt in the
		// browser too.
		run(t, ctx, chromedp.Navigate(h.URL+"/receipt/"+stepReceipts[0]), console.Wait(`!!document.getElementById('browser-verdict')`))
		if js[string](t, ctx, `document.getElementById('browser-verdict').dataset.verified`) != "true" {
			t.Fatalf("the public receipt page does not verify in the browser: %s", textOf(t, ctx, "#browser-check"))
		}
		run(t, ctx, chromedp.Navigate(h.URL+"/#/dir"), console.Ready)
	})

	t.Run("verify", func(t *testing.T) {
		if len(stepReceipts) == 0 {
			t.Skip("the call step failed")
		}
		id := stepReceipts[len(stepReceipts)-1]
		run(t, ctx, console.Go("#/receipt/"+id))
		for _, c := range []string{"hash", "path", "key", "signature"} {
			if js[string](t, ctx, `document.querySelector('[data-check=`+c+`]').dataset.ok`) != "true" {
				t.Fatalf("the %s check fails: %s", c, textOf(t, ctx, "#checks"))
			}
		}
		// The stored receipt is edited behind the host's back: the browser
		// must find it out by itself, whatever the host says.
		if _, err := h.db(t).Exec(`UPDATE receipts SET outcome = 'ok (edited)' WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, console.Go("#/receipt/"+id))
		if js[string](t, ctx, `document.getElementById('browser-verdict').dataset.verified`) != "false" ||
			js[string](t, ctx, `document.querySelector('[data-check=hash]').dataset.ok`) != "false" {
			t.Fatalf("an edited receipt verifies in the browser: %s", textOf(t, ctx, "#checks"))
		}
		if got := textOf(t, ctx, "[data-check=hash]"); !strings.Contains(got, "altered") {
			t.Fatalf("the hash check says %q", got)
		}
	})

	t.Run("tokens", func(t *testing.T) {
		n := requests(t, ctx, console.Go("#/tokens"))
		fewRequests(t, "the tokens page", n, 1)
		// A limit the host refuses is shown with its fix, and mints nothing.
		run(t, ctx, console.Fill("#t_name", "console"), console.Fill("#t_keys", "NOW"), console.Fill("#t_burst", "20"),
			console.Click("#mint"), console.Wait(`!!document.getElementById('mint-error')`))
		if got := textOf(t, ctx, "#mint-error"); !strings.Contains(got, "burst needs a rate") || !strings.Contains(got, "How to fix") {
			t.Fatalf("a burst without a rate shows %q", got)
		}
		run(t, ctx, console.Fill("#t_pin", "NOW"), console.Fill("#t_expires", "86400"), console.Fill("#t_rate", "100"), console.Fill("#t_rate_window", "minute"),
			console.Fill("#t_calls_day", "1000"), console.Fill("#t_budget_usd_day", "5"), console.Fill("#t_budget_usd_month", "50.5"), console.Fill("#t_max_payload", "4096"),
			console.Click("#mint"), console.Wait(`!!document.getElementById('minted-id')`))
		id := textOf(t, ctx, "#minted-id")
		row := `#tokens tr[data-token="` + id + `"]`
		run(t, ctx, console.Wait(`!!document.querySelector(`+strconv.Quote(row)+`)`))
		secret := textOf(t, ctx, "#minted-secret")
		if !strings.HasPrefix(secret, "rct_") {
			t.Fatalf("the minted secret shows as %q", secret)
		}
		listed := textOf(t, ctx, row)
		for _, want := range []string{"keys: NOW", "live until", "100/minute, burst 20", "1,000 calls/day", "$5/day", "$50.5/month", "4,096 bytes max"} {
			if !strings.Contains(listed, want) {
				t.Fatalf("the token list shows %q, without %q", listed, want)
			}
		}
		if strings.Contains(listed, secret) {
			t.Fatalf("the token list shows the secret: %q", listed)
		}
		expect(t, h.do(t, req{Method: "GET", Path: "/api/tokens/" + id}), 200, map[string]any{"rate": "100/minute", "burst": float64(20),
			"calls_day": float64(1000), "budget_usd_day": float64(5), "budget_usd_month": 50.5, "max_payload": float64(4096), "risk_ceiling": "low"})
		// The token's narrower view: one row, no owner screens.
		run(t, ctx, console.Then(console.Click("#use-token")))
		if got := textOf(t, ctx, "#range"); !strings.Contains(got, "of 1") || textOf(t, ctx, "#rows tbody") != "NOW\tfn\ttime\tyes\tReturn the current time from the build clock in Pacific time (America/Los_Angeles)." {
			t.Fatalf("the token sees %q: %q", got, textOf(t, ctx, "#rows tbody"))
		}
		if got := textOf(t, ctx, "#whoami"); !strings.Contains(got, "capability token "+id) {
			t.Fatalf("the header says %q", got)
		}
		if js[bool](t, ctx, `!document.querySelector('#nav a[href="#/tokens"]').hidden`) {
			t.Fatal("a token sees the Tokens screen in the navigation")
		}
		run(t, ctx, console.Go("#/row/DIR_GET"))
		if got := textOf(t, ctx, "#view-error"); !strings.Contains(got, "not_found") {
			t.Fatalf("a row outside the token's scope shows %q", got)
		}
		run(t, ctx, console.Go("#/dir"), console.Fill("#ask", "read one row of this directory"), console.Then(console.Click("#ask-go")))
		if got := textOf(t, ctx, "#view"); strings.Contains(got, "DIR_GET") {
			t.Fatalf("ask shows the token a row outside its scope: %q", got)
		}
		// Back as the owner, revoke it; the token no longer signs in.
		run(t, ctx, console.Then(console.Click("#who button")), console.SignInHere(h.Key), console.Go("#/tokens"),
			console.Click(`#tokens tr[data-token="`+id+`"] button`), console.Wait(`document.querySelector('#tokens tr[data-token="`+id+`"] .state').innerText.startsWith('revoked')`))
		run(t, ctx, console.Then(console.Click("#who button")), console.Fill("#secret", secret), console.Click("form.signin button[type=submit]"),
			console.Wait(`!!document.getElementById('signin-error')`))
		run(t, ctx, console.SignInHere(h.Key))
	})

	t.Run("modules", func(t *testing.T) {
		echo, _ := wasmexamples.ByName("echo")
		file := filepath.Join(t.TempDir(), "c_echo.wasm")
		if err := os.WriteFile(file, echo.Wasm, 0o644); err != nil {
			t.Fatal(err)
		}
		n := requests(t, ctx, console.Go("#/modules"))
		fewRequests(t, "the modules page", n, 1)
		run(t, ctx, chromedp.SetUploadFiles(chromedp.CSS("#m_file"), []string{file}), console.Fill("#m_name", "c_echo"),
			console.Click("#upload"), console.Wait(`!!document.getElementById('uploaded-digest')`),
			console.Wait(`!!document.querySelector('#modules tr[data-module="c_echo"]')`))
		sum := sha256.Sum256(echo.Wasm)
		if got := textOf(t, ctx, "#uploaded-digest"); got != hex.EncodeToString(sum[:]) {
			t.Fatalf("the upload shows digest %q, want %x", got, sum)
		}
		run(t, ctx, console.Click(`#modules tr[data-module="echo"] td.users button`), console.Wait(`!!document.querySelector('#modules tr[data-module="echo"] td.users ul')`))
		if got := textOf(t, ctx, `#modules tr[data-module="echo"] td.users`); got != "ECHO" {
			t.Fatalf("the rows using echo are %q", got)
		}
	})

	t.Run("doc-helper", func(t *testing.T) {
		// NOW's docstring has every line (its first # line is its
		// description): the checklist says so, and nothing is offered.
		run(t, ctx, console.Go("#/edit/NOW"))
		if got := js[[]string](t, ctx, `[...document.querySelectorAll('#doc-check li.no')].map(li => li.innerText)`); len(got) != 0 {
			t.Fatalf("NOW's checklist misses %q", got)
		}
		if js[bool](t, ctx, `document.getElementById('doc-template').checkVisibility()`) {
			t.Fatal(`the form offers "Add the missing docstring lines" when the checklist misses none`)
		}
		// Prose alone: the checklist misses three lines, and the button adds
		// exactly those three, under the prose (which stays the description).
		run(t, ctx, console.Fill("#f_content", "# Reads one row."), chromedp.Evaluate[chromedp.Void](`document.getElementById('f_content').dispatchEvent(new Event('input'))`),
			console.Wait(`document.getElementById('doc-template').checkVisibility()`))
		if got := js[[]string](t, ctx, `[...document.querySelectorAll('#doc-check li.no')].map(li => li.dataset.line)`); strings.Join(got, ",") != "WHEN_TO_USE,ARGS,EX" {
			t.Fatalf("for prose alone the checklist misses %q", got)
		}
		run(t, ctx, console.Click("#doc-template"), console.Wait(`!document.getElementById('doc-template').checkVisibility()`))
		if got := js[string](t, ctx, `document.getElementById('f_content').value`); got != "# Reads one row.\n# WHEN_TO_USE: \n# ARGS: $1=\n# EX: [NOW][/NOW]" {
			t.Fatalf("the button made the content %q", got)
		}
	})

	t.Run("tables", func(t *testing.T) {
		// Rows as an OpenAPI import names them: long keys, long categories,
		// long descriptions.
		for i, r := range [][3]string{
			{"PET_CREATE_USERS_WITH_ARRAY_INPUT", "petstore_users", "Creates list of users with given input array, one user per element, each checked against the User schema before anything is stored."},
			{"PET_FIND_PETS_BY_STATUS", "petstore_pets", "Finds Pets by status: multiple status values can be provided with comma separated strings, and every pet whose status matches one is returned."},
			{longKey, "agent", "An agent row with a key longer than any cell."},
		} {
			expect(t, h.do(t, req{Method: "POST", Path: "/api/directory", Body: map[string]any{"key": r[0], "type": "http",
				"target": "GET $SELF/api/directory/" + strconv.Itoa(i), "category": r[1], "content": "# WHAT: " + r[2]}}), 201, nil)
		}
		for _, hash := range []string{"#/dir", "#/tokens", "#/modules"} {
			unbroken(t, ctx, hash)
		}
	})

	t.Run("delete", func(t *testing.T) {
		run(t, ctx, console.Go("#/row/ZZ_CONSOLE"), console.Then(console.Click("#delete-link")), console.Click("#delete-confirm"), console.Wait(`!!document.getElementById('deleted')`))
		expect(t, h.do(t, req{Method: "GET", Path: "/api/directory/ZZ_CONSOLE"}), 404, nil)
	})

	t.Run("phone", func(t *testing.T) {
		ctx := browser(t, console.Phone)
		// By keyboard alone: the sign-in field has the focus, Enter submits.
		run(t, ctx, chromedp.Navigate(h.URL+"/"), console.Ready)
		if !js[bool](t, ctx, `document.activeElement === document.getElementById('secret')`) {
			t.Fatalf("the sign-in page's focus is on %s, not the key field", js[string](t, ctx, `document.activeElement.outerHTML`))
		}
		run(t, ctx, console.Then(chromedp.KeyEvent(h.Key+"\r")))
		if got := textOf(t, ctx, "#range"); !strings.Contains(got, "of ") {
			t.Fatalf("after signing in by keyboard the page shows %q", textOf(t, ctx, "#view"))
		}
		if w := js[int](t, ctx, `document.documentElement.scrollWidth`); w > int(console.Phone.Width) {
			t.Errorf("the directory is %d px wide on a %d px phone", w, console.Phone.Width)
		}
		// Each row is a card that shows what a person needs: the key, the
		// type, the category, whether it is enabled and what it does.
		card := js[[]string](t, ctx, `[...document.querySelectorAll('#rows tbody tr:first-child td')].filter(td => td.checkVisibility()).map(td => td.innerText)`)
		if strings.Join(card, "|") != "DIR_GET|http|rowcall|yes|Read one row of this directory: its whole contract, version and row_num." {
			t.Errorf("the directory's first card shows %q", card)
		}
		if w := js[float64](t, ctx, `document.querySelector('#rows tbody tr').getBoundingClientRect().width`); w > float64(console.Phone.Width) {
			t.Errorf("a directory card is %.0f px wide on a %d px phone", w, console.Phone.Width)
		}
		unbroken(t, ctx, "#/dir")
		// A key wider than the card is cut on one line, whole in its title.
		long := `document.querySelector('#rows a[title="` + longKey + `"]')`
		if !js[bool](t, ctx, `(a => !!a && a.textContent === a.title && a.scrollWidth > a.clientWidth && a.getClientRects().length === 1)(`+long+`)`) {
			t.Errorf("the long key shows as %q", js[string](t, ctx, `(`+long+` || {}).outerHTML || 'nothing'`))
		}
		pages := []string{"#/edit/NOW", "#/row/ROW_DOSSIER", "#/call/ROW_DOSSIER", "#/tokens", "#/modules"}
		if len(stepReceipts) > 0 {
			pages = append(pages, "#/receipt/"+stepReceipts[0])
		}
		for _, hash := range pages {
			run(t, ctx, console.Go(hash))
			if w := js[int](t, ctx, `document.documentElement.scrollWidth`); w > int(console.Phone.Width) {
				t.Errorf("%s is %d px wide on a %d px phone", hash, w, console.Phone.Width)
			}
			unbroken(t, ctx, hash)
		}
	})
}

// TestConsoleInTenant: the consoles of two tenants of one host, side by
// side in one browser. Each tab signs in with its own tenant's owner key,
// lists its own tenant's rows and none of the other's, and every request its
// page made (scripts, styles, the API) went under its own /t/NAME/. The key
// a tab holds is its tenant's alone: the same tab opening the other tenant's
// console is asked to sign in, and finds its first tenant still signed in
// when it comes back.
func TestConsoleInTenant(t *testing.T) {
	_, tenants := startTenants(t, nil, "acme", "globex")
	names := []string{"acme", "globex"}
	for _, name := range names {
		createRow(t, tenants[name], map[string]any{"key": "ONLY_" + strings.ToUpper(name), "type": "http", "target": "GET https://api.example.test/",
			"content": "# WHAT: a row of " + name + " alone"})
	}
	first := browser(t, console.Laptop)
	tabs := map[string]context.Context{}
	for i, name := range names {
		tab := first
		if i > 0 {
			var cancel context.CancelFunc
			tab, cancel = chromedp.NewContext(first) // another tab of the same browser
			t.Cleanup(cancel)
		}
		tabs[name] = tab
		h := tenants[name]
		run(t, tab, console.SignIn(h.URL, h.Key), console.Go("#/tokens"), console.Go("#/dir"))
	}
	for i, name := range names {
		tab, other := tabs[name], names[1-i]
		run(t, tab, console.Go("#/dir"))
		if got := textOf(t, tab, "#rows tbody"); !strings.Contains(got, "ONLY_"+strings.ToUpper(name)) || strings.Contains(got, "ONLY_"+strings.ToUpper(other)) {
			t.Errorf("%s's console lists %q", name, got)
		}
		paths, err := chromedp.Run(tab, console.Requests)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(paths, "/t/"+name+"/api/me") || !slices.Contains(paths, "/t/"+name+"/api/tokens") {
			t.Errorf("%s's console did not ask its own API: %q", name, paths)
		}
		for _, p := range paths {
			if !strings.HasPrefix(p, "/t/"+name+"/") {
				t.Errorf("%s's console requested %s, outside its tenant", name, p)
			}
		}
	}
	acme, globex := tabs["acme"], tenants["globex"]
	run(t, acme, chromedp.Navigate(globex.URL+"/"), console.Ready, chromedp.WaitVisible(chromedp.ID("secret")))
	if js[bool](t, acme, `!!document.getElementById('signin-notice')`) {
		t.Errorf("globex's console, opened in acme's tab, was sent acme's key: %s", textOf(t, acme, "#signin-notice"))
	}
	run(t, acme, chromedp.Navigate(tenants["acme"].URL), console.Ready) // without its last slash
	if got := textOf(t, acme, "#whoami"); !strings.Contains(got, "owner key") || !strings.Contains(textOf(t, acme, "#rows tbody"), "ONLY_ACME") {
		t.Fatalf("back at acme's console the tab shows %q: %q", got, textOf(t, acme, "#view"))
	}
}

// TestConsoleFiles: the console is served keyless at / with a policy that
// lets nothing but this origin run, its files are revalidated by ETag, and
// every other path outside the API still answers not_found.
func TestConsoleFiles(t *testing.T) {
	h := startHost(t, nil)
	page := h.do(t, req{Method: "GET", Path: "/", NoAuth: true})
	if page.Status != 200 || !strings.Contains(page.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(page.Raw), `src="console/app.js"`) ||
		!strings.Contains(page.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("GET / answered %d %v: %.200s", page.Status, page.Header, page.Raw)
	}
	js := h.do(t, req{Method: "GET", Path: "/console/app.js", NoAuth: true})
	tag := js.Header.Get("ETag")
	if js.Status != 200 || !strings.Contains(js.Header.Get("Content-Type"), "javascript") || tag == "" {
		t.Fatalf("GET /console/app.js answered %d %v", js.Status, js.Header)
	}
	if again := h.do(t, req{Method: "GET", Path: "/console/app.js", NoAuth: true, Header: map[string]string{"If-None-Match": tag}}); again.Status != 304 {
		t.Fatalf("a revalidation with the ETag answered %d, want 304", again.Status)
	}
	expect(t, h.do(t, req{Method: "GET", Path: "/console/nope.js", NoAuth: true}), 404, nil)
	expect(t, h.do(t, req{Method: "GET", Path: "/console/", NoAuth: true}), 404, nil) // no listing
	expect(t, h.do(t, req{Method: "GET", Path: "/index.html", NoAuth: true}), 404, map[string]any{"error": "not_found", "message": "GET /index.html is not part of the API"})
}

// TestConsoleWorker: sign-in and the call path on the worker in workerd,
// which serves the same embedded console.
func TestConsoleWorker(t *testing.T) {
	tg := startWorker(t, []string{"ROWCALL_NO_EXAMPLES=0"})
	ctx := browser(t, console.Laptop)
	run(t, ctx, console.SignIn(tg.URL, tg.Key))
	if got := textOf(t, ctx, "#whoami"); !strings.Contains(got, "owner key") {
		t.Fatalf("the header says %q", got)
	}
	run(t, ctx, console.Go("#/call/ECHO"), console.Fill("#call-body", "hello from the worker"), console.Click("#run"), console.Wait(`!!document.getElementById('trace-tree')`))
	if got := textOf(t, ctx, "#result"); !strings.Contains(got, "hello from the worker") {
		t.Fatalf("ECHO answered %q", got)
	}
	run(t, ctx, console.Then(console.Click("#trace-tree a.receipt-link")))
	if js[string](t, ctx, `document.getElementById('browser-verdict').dataset.verified`) != "true" {
		t.Fatalf("the worker's receipt does not verify in the browser: %s", textOf(t, ctx, "#checks"))
	}
}

// BenchmarkConsoleFirstScreen: the directory's first screen on a
// 10,000-row directory, from navigation start to the first page of rows in
// the table (the console's performance mark), in the test browser.
func BenchmarkConsoleFirstScreen(b *testing.B) {
	h := startHost(b, nil)
	importRows(b, h, rowgen.Noise(10_000, 7))
	ctx := browser(b, console.Laptop)
	run(b, ctx, console.SignIn(h.URL, h.Key))
	var total float64
	reqs := 0
	b.ResetTimer()
	for i := range b.N {
		run(b, ctx, chromedp.Navigate(h.URL+"/?i="+strconv.Itoa(i)+"#/dir"), console.Ready)
		ms := js[float64](b, ctx, `performance.getEntriesByName('rowcall:first-rows')[0].startTime`)
		total += ms
		reqs = js[int](b, ctx, `performance.getEntriesByType('resource').filter(e => new URL(e.name).pathname.startsWith('/api/')).length`)
	}
	b.StopTimer()
	if got := textOf(b, ctx, "#range"); !strings.Contains(got, "of 10,000") {
		b.Fatalf("the directory shows %q", got)
	}
	b.ReportMetric(total/float64(b.N), "ms/first-screen")
	b.ReportMetric(float64(reqs), "api-requests")
}
