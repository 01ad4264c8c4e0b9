package main

import (
	"net/http"
	"net/url"
	"testing"
)

// Which D1 session each kind of request starts from (d1session.go).
func TestSessionConstraint(t *testing.T) {
	const b = "00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683"
	for _, c := range []struct {
		method, target, auth, bookmark, want string
	}{
		{"GET", "/api/directory?limit=50", "", "", firstUnconstrained},
		{"GET", "/api/directory?limit=50", "", b, b},
		{"GET", "/api/directory/K", "rk_owner", b, b},
		{"GET", "/api/dispatch?key=K&format=json", "", "", firstUnconstrained},
		{"GET", "/api/dispatch?ask=weather", "", b, b},
		{"GET", "/api/dispatch?key=K&run=1&body=x", "", b, firstPrimary},
		{"GET", "/api/dispatch?confirm=inv_x", "", "", firstPrimary},
		{"GET", "/api/directory", "rct_secret", b, firstPrimary},
		{"POST", "/api/dispatch", "", b, firstPrimary},
		{"PATCH", "/api/directory/K", "", "", firstPrimary},
		{"POST", "/mcp", "", "", firstPrimary},
		{"HEAD", "/api/directory", "", "", firstUnconstrained},
	} {
		u, _ := url.Parse(c.target)
		h := http.Header{}
		if c.auth != "" {
			h.Set("Authorization", "Bearer "+c.auth)
		}
		if c.bookmark != "" {
			h.Set(bookmarkHeader, c.bookmark)
		}
		got, err := sessionConstraint(c.method, u, h)
		if err != nil || got != c.want {
			t.Errorf("%s %s (auth %q, bookmark %q): %q %v, want %q", c.method, c.target, c.auth, c.bookmark, got, err, c.want)
		}
	}
	for _, bad := range []string{"x'; DROP", "a b", string(make([]byte, maxBookmark+1)), "ünïcode"} {
		h := http.Header{bookmarkHeader: {bad}}
		if got, err := sessionConstraint("GET", &url.URL{Path: "/api/directory"}, h); err == nil {
			t.Errorf("bookmark %q accepted as %q", bad, got)
		}
	}
}

func TestParseD1Answer(t *testing.T) {
	r, w, b, rest, err := parseD1Answer("51 0 0000000a-0001\n[[\"key\"],[\"A\"]]")
	if err != nil || r != 51 || w != 0 || b != "0000000a-0001" || rest != `[["key"],["A"]]` {
		t.Fatalf("%d %d %q %q %v", r, w, b, rest, err)
	}
	if _, _, b, rest, err := parseD1Answer("0 4 -\n[1,7]"); err != nil || b != "" || rest != "[1,7]" {
		t.Fatalf("no bookmark: %q %q %v", b, rest, err)
	}
	for _, bad := range []string{"", "[]", "1 2\n[]", "x 2 -\n[]", "1 2 - 4\n[]"} {
		if _, _, _, _, err := parseD1Answer(bad); err == nil {
			t.Errorf("parseD1Answer(%q) accepted it", bad)
		}
	}
}

// The ledger keeps the newest bookmark, the totals, and the last maxRecent
// requests.
func TestD1Ledger(t *testing.T) {
	var l d1Ledger
	l.saw("00000002-0000")
	l.saw("00000001-ffff")
	l.saw("")
	if got := l.newest(""); got != "00000002-0000" {
		t.Fatalf("newest %q", got)
	}
	if got := l.newest("00000003-0000"); got != "00000003-0000" {
		t.Fatalf("a newer own bookmark: %q", got)
	}
	for i := range maxRecent + 5 {
		l.record(d1Request{Request: "GET /x", d1Counts: d1Counts{Statements: 1, RowsRead: int64(i)}})
	}
	s := l.snapshot()
	recent := s["recent"].([]d1Request)
	if len(recent) != maxRecent || recent[len(recent)-1].RowsRead != maxRecent+4 || recent[0].RowsRead != 5 {
		t.Fatalf("recent: %d lines, first %+v", len(recent), recent[0])
	}
	if tot := s["total"].(d1Counts); tot.Statements != maxRecent+5 {
		t.Fatalf("total %+v", tot)
	}
	if st := statement("SELECT  a,\n\tb FROM t", 3, 0); st.SQL != "SELECT a, b FROM t" {
		t.Fatalf("statement %q", st.SQL)
	}
}
