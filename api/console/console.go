// Package console is rowcall's web console: static HTML, CSS and JavaScript
// modules embedded in the binary (no CDN, no build step, no framework), which
// the API handler serves at / on every host, the worker included.
//
// The console is a client of the public API and nothing more: it signs in
// with the owner key or a capability token, kept in the tab's sessionStorage
// (never in a URL), sends it as Authorization: Bearer on every call, and shows
// what the API answers for that credential, so a token sees only its scope.
// Receipts are verified in the browser with WebCrypto (SHA-256 of the
// receipt's RFC 8785 form, its Merkle path, the Ed25519 signature against
// /.well-known/rowcall-receipt-keys): static/verify.js mirrors package
// ledger.
//
// Index serves the page at GET /; Assets serves static/ under /console/.
package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed static
var files embed.FS

// static is the console's files (index.html, *.js, *.css).
var static, _ = fs.Sub(files, "static")

// etags name each file's content, so a browser that has it gets a 304.
var etags = func() map[string]string {
	m := map[string]string{}
	fs.WalkDir(static, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(static, name)
			sum := sha256.Sum256(b)
			m[name] = `"` + hex.EncodeToString(sum[:12]) + `"`
		}
		return nil
	})
	return m
}()

// headers are sent with every console file: nothing but this origin may run
// or load anything, and no page may frame it.
func headers(w http.ResponseWriter, name string) {
	h := w.Header()
	h.Set("ETag", etags[name]) // http.ServeContent answers If-None-Match with it
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}

// Index serves the console's page (GET / only).
func Index(w http.ResponseWriter, r *http.Request) {
	headers(w, "index.html")
	http.ServeFileFS(w, r, static, "index.html")
}

var assets = http.StripPrefix("/console/", http.FileServerFS(static))

// Assets serves the console's scripts and styles under /console/.
func Assets(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/console/")
	if _, ok := etags[name]; !ok { // no directory listings, nothing but the files
		http.NotFound(w, r)
		return
	}
	headers(w, name)
	assets.ServeHTTP(w, r)
}
