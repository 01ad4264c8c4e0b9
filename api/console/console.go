// Package console is rowcall's web console: static HTML, CSS and JavaScript
// modules embedded in the binary (no CDN, no build step, no framework), which
// the API handler serves at / on every host, the worker included.
//
// The console is a client of the public API and nothing more. A person signs
// in with the organisation's OpenID provider (GET /login): the session cookie,
// which the console's script never sees, goes with its same-origin calls. The
// owner key or a capability token can be pasted instead (break-glass), kept
// in the tab's sessionStorage (never in a URL) and sent as Authorization:
// Bearer. GET /api/me says who is signed in and with which rights; the
// console offers what those rights allow and shows what the API answers for
// that credential, refusals included, so a token or a role sees only its
// scope.
// Receipts are verified in the browser with WebCrypto (SHA-256 of the
// receipt's RFC 8785 form, its Merkle path, the Ed25519 signature against
// /.well-known/rowcall-receipt-keys): static/verify.js mirrors package
// ledger.
//
// Index serves the page at GET /; Assets serves static/ under /console/.
// Neither writes a path into what it serves: the page's links are relative
// and its scripts take the base from their own address (static/lib.js), so
// the console works wherever the handler is mounted (a tenant's /t/NAME/).
package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"sync"
)

//go:embed static
var files embed.FS

// static is the console's files (index.html, *.js, *.css).
var static, _ = fs.Sub(files, "static")

// etags name each file's content, so a browser that has it gets a 304: a
// file's (quoted hex) is made when it is first served, not at start, where
// hashing every file would weigh on a worker's first request. The map itself
// only lists the files.
var etags = func() map[string]func() string {
	m := map[string]func() string{}
	fs.WalkDir(static, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() { // a directory is no file
			m[name] = sync.OnceValue(func() string {
				b, _ := fs.ReadFile(static, name)
				sum := sha256.Sum256(b)
				return `"` + hex.EncodeToString(sum[:12]) + `"`
			})
		}
		return nil
	})
	return m
}()

// etag returns the ETag of the file name, and whether there is such a file.
func etag(name string) (string, bool) {
	if e, ok := etags[name]; ok {
		return e(), true
	}
	return "", false
}

// headers are sent with every console file: Secure's, and its ETag.
func headers(w http.ResponseWriter, etag string) {
	h := w.Header()
	h.Set("ETag", etag) // http.ServeContent answers If-None-Match with it
	Secure(h)
	h.Set("Cache-Control", "no-cache")
}

// Secure sets the headers of every page a browser shows from this host (the
// console's files, the public receipt page): nothing but this origin may run
// or load anything (no inline script or style), no page may frame it, no
// answer is sniffed into another type, and no address leaves in a Referer.
func Secure(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: https:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// Index serves the console's page (GET / only).
func Index(w http.ResponseWriter, r *http.Request) {
	e, _ := etag("index.html")
	headers(w, e)
	http.ServeFileFS(w, r, static, "index.html")
}

var assets = http.StripPrefix("/console/", http.FileServerFS(static))

// Assets serves the console's scripts and styles under /console/.
func Assets(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/console/")
	e, ok := etag(name)
	if !ok { // no directory listings, nothing but the files
		http.NotFound(w, r)
		return
	}
	headers(w, e)
	assets.ServeHTTP(w, r)
}
