// Package console drives rowcall's web console (package api/console) in a
// real headless Chromium, the system's (Debian's chromium package; make test
// installs it), through chromedp: no browser is downloaded. The browser tests
// (test/console_test.go) and the screenshot command (./shots) share it.
//
//	ctx, cancel, err := console.Browser(context.Background(), console.Laptop)
//	err = chromedp.Run(ctx, console.SignIn(url, ownerKey))
//	err = chromedp.Run(ctx, console.Go("#/tokens"), chromedp.WaitVisible("#mint-form", chromedp.ByQuery))
package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/chromedp/chromedp"
)

// Size is a browser viewport.
type Size struct {
	Name          string
	Width, Height int64
	Mobile        bool
}

// The two widths the console is built for.
var (
	Laptop = Size{"laptop", 1280, 900, false}
	Phone  = Size{"phone", 390, 844, true}
)

// ErrNoChromium is returned by Chromium when no browser is installed.
var ErrNoChromium = errors.New("no chromium on PATH (apt-get install chromium; make test installs it); set ROWCALL_CHROMIUM to another binary")

// Chromium is the browser binary: $ROWCALL_CHROMIUM, else chromium (Debian)
// or chromium-browser on PATH.
func Chromium() (string, error) {
	if p := os.Getenv("ROWCALL_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}

// Browser starts a headless Chromium with one tab at size; cancel closes it.
// It runs without the sandbox when running as root (Chromium refuses to
// start sandboxed as root), talks to nothing but the pages it is sent to, and
// keeps its profile in a temporary directory.
func Browser(parent context.Context, size Size) (context.Context, context.CancelFunc, error) {
	bin, err := Chromium()
	if err != nil {
		return nil, nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin),
		chromedp.WindowSize(int(size.Width), int(size.Height)), chromedp.Flag("no-proxy-server", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	cancel := func() { cancelTab(); cancelAlloc() }
	vp := []chromedp.EmulateViewportOption{chromedp.EmulatePortrait}
	if size.Mobile {
		vp = append(vp, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.Width, size.Height, vp...)); err != nil {
		cancel()
		return nil, nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	return ctx, cancel, nil
}

// Ready waits until the console has rendered the view its hash names
// (app.js sets data-ready on <main> when a view is in place).
var Ready = Wait(`!!document.getElementById('view') && document.getElementById('view').dataset.ready === '1'`)

// Go shows the console view at hash (e.g. "#/dir") and waits for it.
func Go(hash string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Evaluate[chromedp.Void](`document.getElementById('view').dataset.ready = ''; if (location.hash === `+strconv.Quote(hash)+`) dispatchEvent(new HashChangeEvent('hashchange')); else location.hash = `+strconv.Quote(hash)),
		Ready,
	)
}

// Then runs act (a click that moves to another view) and waits for the view.
func Then(act chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Evaluate[chromedp.Void](`document.getElementById('view').dataset.ready = ''`), act, Ready)
}

// Wait waits until the JavaScript expression is truthy.
func Wait(expr string) chromedp.Action[chromedp.Void] {
	return wait(chromedp.Poll[bool](expr))
}

// A poll whose document is replaced under it (a navigation that had not
// settled when it began) fails with the old document's execution context
// gone; wait polls again in the new one, until ctx ends.
func wait(a chromedp.Action[bool]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for {
			_, err := a(ctx, t)
			if err == nil || ctx.Err() != nil || !replaced(err) {
				return chromedp.Void{}, err
			}
		}
	}
}

// replaced reports whether err is Chrome's answer to an evaluation in an
// execution context a navigation destroyed.
func replaced(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find context with specified id") || strings.Contains(s, "Execution context was destroyed")
}

// Click clicks the element css selects, as a person would (a mouse event).
func Click(css string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.CSS(css), chromedp.NodeVisible)
}

// Fill sets the value of the form field css selects.
func Fill(css, value string) chromedp.Action[chromedp.Void] {
	return chromedp.SetValue(chromedp.CSS(css), value)
}

// SignIn opens the console at base and signs in with secret.
func SignIn(base, secret string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Navigate(base+"/"), Ready, SignInHere(secret))
}

// SignInHere signs in on the sign-in form already shown.
func SignInHere(secret string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.ID("secret")),
		Fill("#secret", secret),
		Then(Click(`form.signin button[type=submit]`)),
	)
}

// APIRequests counts the requests the page made to the API (and its
// well-known files) since the last ClearRequests, under the console's base:
// the folder of the page's address (/ on a host, /t/NAME/ in a tenant).
var APIRequests = chromedp.Evaluate[int](`(() => {
  const base = new URL('.', location.href).pathname;
  return performance.getEntriesByType('resource').filter(e => { const p = new URL(e.name).pathname; return p.startsWith(base + 'api/') || p.startsWith(base + '.well-known/'); }).length;
})()`)

// Requests lists the path of every request the page made since it was
// loaded or since the last ClearRequests (its scripts and styles too).
var Requests = chromedp.Evaluate[[]string](`performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)`)

// ClearRequests forgets the requests counted so far.
var ClearRequests = chromedp.Evaluate[chromedp.Void](`performance.clearResourceTimings(); performance.setResourceTimingBufferSize(10000)`)

// BrokenWords lists every word of a table cell, or of a card made from a
// table row, that the page shows split across lines (a word is a run of
// non-space characters; a hyphen ends one, as a line may break after it), and every such cell whose text spills out of it, as "word (where)";
// it is empty when every cell keeps its words whole. It measures the layout
// as drawn: a Range over a word's first and over its last character, whose
// boxes sit on different lines when the word was broken.
var BrokenWords = chromedp.Evaluate[[]string](`(() => {
  const bad = [], where = el => location.hash + ' ' + ((el.closest('table') || {}).id || 'table') + ' ' + el.tagName.toLowerCase();
  const mid = (node, i) => {
    const r = document.createRange();
    r.setStart(node, i); r.setEnd(node, i + 1);
    const b = r.getClientRects()[0];
    return b && b.height ? [b.top + b.height / 2, b.height] : null;
  };
  for (const cell of document.querySelectorAll('#view td, #view th')) {
    if (!cell.getClientRects().length) continue;
    if (cell.scrollWidth > cell.clientWidth + 1) bad.push('text wider than its cell: ' + cell.innerText.slice(0, 60) + ' (' + where(cell) + ')');
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (const m of n.data.matchAll(/[^\s-]+-?/g)) {
        if (m[0].length < 2) continue;
        let last = m.index + m[0].length - 1;
        if (/[\uDC00-\uDFFF]/.test(n.data[last])) last--;
        const a = mid(n, m.index), b = mid(n, last);
        if (a && b && Math.abs(a[0] - b[0]) > Math.min(a[1], b[1]) / 2) bad.push(m[0] + ' (' + where(cell) + ')');
      }
    }
  }
  return bad;
})()`)
