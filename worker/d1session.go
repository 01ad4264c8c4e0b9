package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// D1 read replication and cost, per request (docs/d1.md has the audit).
//
// Every request runs its statements in one D1 session,
// env.DB.withSession(constraint) (request.go), chosen here from the request
// alone:
//
//   - first-primary for what must read the newest state: every write (any
//     method but GET and HEAD: the directory's edits, a dispatch, an import,
//     MCP), a GET that dispatches (?key=…&run=1), a receipt's confirm
//     (?confirm=: a public proof must not say "not found" because a replica
//     lags), and any request that presents a capability token (rct_…: a
//     revoked token must stop at once, a fresh one work at once). The session's
//     first statement goes to the primary and every later one to a copy at
//     least that new, so a dispatch's look at the event log (the dispatcher's
//     freshness check) and its row read see the primary's state at the
//     request's start; its receipt's INSERT, conditioned on that event id,
//     runs on the primary (writes always do).
//   - for every other read (the directory list and rows, history, a contract
//     document, ask, the registry, modules): the bookmark the client sent
//     back in x-d1-bookmark, so a client that just wrote reads its write; or,
//     without one, first-unconstrained: the nearest copy, which may lag.
//
// A statement on a context marked onPrimary (the vector sync's look at the
// rows it just upserted, which must see another isolate's newer write) runs
// in a first-primary session of its own.
//
// Every answer carries the newest bookmark this instance has seen (its own
// session's or a later one: a receipt's INSERT runs in whichever request's
// session the receipt log's writer took), so sending it back reads at least
// everything this request wrote. Every answer also carries the rows D1
// read and wrote for it (x-rowcall-rows-read, x-rowcall-rows-written: the sum
// of the statements' meta.rows_read and meta.rows_written), and GET
// /_worker/stats keeps the totals and the last requests' counts.

// The headers of the bookmark round trip and of the rows counts.
const (
	bookmarkHeader    = "X-D1-Bookmark"
	rowsReadHeader    = "X-Rowcall-Rows-Read"
	rowsWrittenHeader = "X-Rowcall-Rows-Written"
)

// D1's session constraints (workerd's d1-api).
const (
	firstPrimary       = "first-primary"
	firstUnconstrained = "first-unconstrained"
)

// maxBookmark bounds a bookmark a client sends back (D1's are about 60
// characters).
const maxBookmark = 200

// sessionConstraint returns what r's D1 session starts from: a bookmark or a
// constraint. A malformed bookmark is an error (the request is refused, and
// nothing ran).
func sessionConstraint(method string, u *url.URL, h http.Header) (string, error) {
	b := strings.TrimSpace(h.Get(bookmarkHeader))
	if b != "" && !validBookmark(b) {
		return "", fmt.Errorf("x-d1-bookmark must be the value of an earlier answer's x-d1-bookmark header (letters, digits and dashes, at most %d); got %.40q", maxBookmark, b)
	}
	switch {
	case needsPrimary(method, u, h):
		return firstPrimary, nil // the primary is at least as new as any bookmark
	case b != "":
		return b, nil
	}
	return firstUnconstrained, nil
}

// needsPrimary reports whether r must start on the primary (see the top of
// the file).
func needsPrimary(method string, u *url.URL, h http.Header) bool {
	if method != http.MethodGet && method != http.MethodHead {
		return true
	}
	if u.Path == "/api/dispatch" {
		q := u.Query()
		if q.Has("confirm") || (q.Has("key") && q.Get("run") == "1") {
			return true
		}
	}
	secret := h.Get("X-Terminal-Key")
	if a := h.Get("Authorization"); secret == "" && len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		secret = strings.TrimSpace(a[7:])
	}
	return strings.HasPrefix(secret, "rct_") // api.TokenPrefix
}

func validBookmark(b string) bool {
	if len(b) > maxBookmark {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

// newerBookmark reports whether bookmark a is newer than b. D1's bookmarks
// are fixed-width hexadecimal fields joined by dashes, which D1's own session
// compares as strings (workerd keeps the larger by localeCompare); "" is
// older than any.
func newerBookmark(a, b string) bool { return a > b }

// d1Meta is the first line of the shim's answer to a statement: D1's
// meta.rows_read and meta.rows_written for it, and the session's bookmark
// after it ("-" for none). parseD1Answer splits it from the rest.
func parseD1Answer(text string) (read, written int64, bookmark, rest string, err error) {
	head, rest, ok := strings.Cut(text, "\n")
	f := strings.Fields(head)
	if !ok || len(f) != 3 {
		return 0, 0, "", "", fmt.Errorf("d1: answer without meta: %.80q", text)
	}
	r, err1 := strconv.ParseInt(f[0], 10, 64)
	w, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, "", "", fmt.Errorf("d1: answer meta %q", head)
	}
	if f[2] != "-" {
		bookmark = f[2]
	}
	return r, w, bookmark, rest, nil
}

// d1Counts is what D1 did for one request, or for all of them.
type d1Counts struct {
	Statements  int64 `json:"statements"`
	RowsRead    int64 `json:"rows_read"`
	RowsWritten int64 `json:"rows_written"`
}

func (c *d1Counts) add(o d1Counts) {
	c.Statements += o.Statements
	c.RowsRead += o.RowsRead
	c.RowsWritten += o.RowsWritten
}

// d1Request is one request's line in /_worker/stats.
type d1Request struct {
	Request string `json:"request"` // METHOD path?query
	Session string `json:"session"` // the constraint or bookmark it started from
	d1Counts
	Each []d1Statement `json:"each"` // its first maxEach statements
}

// d1Statement is one statement's account: its SQL (cut at maxSQL bytes, white
// space folded) and its meta.
type d1Statement struct {
	SQL         string `json:"sql"`
	RowsRead    int64  `json:"rows_read"`
	RowsWritten int64  `json:"rows_written"`
}

// Bounds of a request's line in /_worker/stats.
const (
	maxEach = 32
	maxSQL  = 160
)

// statement returns q's account line.
func statement(q string, read, written int64) d1Statement {
	return d1Statement{SQL: foldedSQL(q), RowsRead: read, RowsWritten: written}
}

// folded keeps each statement text's account form, made once: a request
// runs the same few statements again and again (a dispatch's receipt INSERT
// is 600 bytes to fold), and at most maxFolded texts are kept.
var folded = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

const maxFolded = 256

// foldedSQL is q with its white space folded, cut at maxSQL bytes.
func foldedSQL(q string) string {
	folded.Lock()
	f, ok := folded.m[q]
	folded.Unlock()
	if ok {
		return f
	}
	f = strings.Join(strings.Fields(q), " ")
	if len(f) > maxSQL {
		f = f[:maxSQL] + "…"
	}
	folded.Lock()
	if len(folded.m) < maxFolded {
		folded.m[q] = f
	}
	folded.Unlock()
	return f
}

// d1Ledger is the instance's D1 account: the totals, the newest bookmark
// seen, and the last requests' counts.
type d1Ledger struct {
	mu       sync.Mutex
	total    d1Counts
	bookmark string
	recent   []d1Request // the last maxRecent, oldest first
}

// maxRecent is how many requests /_worker/stats lists.
const maxRecent = 64

// saw notes a bookmark some statement's session ended at.
func (l *d1Ledger) saw(bookmark string) {
	l.mu.Lock()
	if newerBookmark(bookmark, l.bookmark) {
		l.bookmark = bookmark
	}
	l.mu.Unlock()
}

// newest returns the newest bookmark seen, or own when that is newer.
func (l *d1Ledger) newest(own string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if newerBookmark(own, l.bookmark) {
		return own
	}
	return l.bookmark
}

// record adds one finished request.
func (l *d1Ledger) record(r d1Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total.add(r.d1Counts)
	if len(l.recent) >= maxRecent {
		l.recent = append(l.recent[:0], l.recent[1:]...)
	}
	l.recent = append(l.recent, r)
}

// snapshot is the ledger as /_worker/stats shows it.
func (l *d1Ledger) snapshot() map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return map[string]any{"total": l.total, "bookmark": l.bookmark, "recent": append([]d1Request(nil), l.recent...)}
}

// primaryKey marks a context whose D1 statements read the primary, each in a
// session of its own (first-primary), whatever the request's session.
type primaryKey struct{}

// onPrimary returns ctx with its statements on the primary: a read that must
// see another isolate's write committed a moment ago (the vector sync's look
// at the rows it just upserted, vectorsync.go).
func onPrimary(ctx context.Context) context.Context {
	return context.WithValue(ctx, primaryKey{}, true)
}
