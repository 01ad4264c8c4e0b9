package rowcall

import (
	"net/url"
	"strings"
)

// EImportNotOwner is the code of an import that would replace a row it did
// not create (ImportMayReplace).
const EImportNotOwner Code = "import_not_owner"

// ImportMayReplace is the one rule of every importer that makes rows from
// outside input (an OpenAPI document, an MCP server): an import from source
// (its import id, e.g. "openapi:https://api.example.com", which the rows it
// writes keep in ImportedFrom) may overwrite the stored row old only when that
// same source made it, or when the owner asked to replace (replace). A row
// written by hand, by another import or by a plain registry import is never
// replaced silently.
func ImportMayReplace(old *Row, source string, replace bool) *Error {
	if replace || source == "" || old.ImportedFrom == source {
		return nil
	}
	by := "by hand or by `rowcall import`"
	if old.ImportedFrom != "" {
		by = "by the import " + old.ImportedFrom
	}
	return &Error{Code: EImportNotOwner,
		Message:  "the row " + old.Key + " exists and was made " + by + ", not by this import (" + source + "); nothing was imported",
		HowToFix: "import under other keys (--prefix), or replace it on purpose (--replace, replace=1)",
		Extra:    map[string]any{"key": old.Key, "imported_from": old.ImportedFrom}}
}

// Origin is the scheme://host[:port] an http row's target reaches ("GET
// https://api.example.com/v1/x" → "https://api.example.com"), or "" when the
// row is not an http row or its target names no fixed origin (a $ reference
// in the host, user info, $SELF).
func (r *Row) Origin() string {
	if r.Type != TypeHTTP {
		return ""
	}
	f := strings.Fields(r.Target) // "METHOD url", as the http runner reads it
	if len(f) != 2 {
		return ""
	}
	return URLOrigin(f[1])
}

// URLOrigin is the origin (scheme://host[:port], as written) of an absolute
// http(s) URL whose authority holds no user info and no $ reference, else "".
// Text after the authority (path, query) may hold anything: it cannot move
// the request to another host.
func URLOrigin(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return ""
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	p, err := url.Parse(scheme + "://" + host)
	if host == "" || err != nil || p.User != nil || p.Host != host || strings.ContainsAny(host, "$@\\") {
		return ""
	}
	return scheme + "://" + host
}
