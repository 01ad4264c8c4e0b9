package args

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRender checks that a value cannot break out of its slot: in JSON mode a
// value inside a string literal of a valid JSON template leaves valid JSON
// that decodes back to the value; in URL mode a value adds no '&', '=' or '#'
// to the query and reads back intact.
func FuzzRender(f *testing.F) {
	f.Add(`ROUTER|{"content":"a|b"}`, "plain")
	f.Add(`a"b\|c\"d`, `x\"y`)
	f.Add("\x00\n\u2028|\xff\xfe", "\\")
	f.Add("a&b=c#d?e/f g+h%20", "?")
	f.Add("", "")
	f.Add("a|b", "$1$$2+$PREV.a.#$$X.$0$")
	f.Fuzz(func(t *testing.T, body, text string) {
		v := Values{Args: Split(body)}
		first, rest := v.Args[0], ""
		if len(v.Args) > 1 {
			rest = strings.Join(v.Args[1:], "|")
		}
		for _, mode := range []Mode{Raw, URL, JSON, Body} { // any template: no panic
			if out := Render(text, mode, v); !strings.Contains(text, "$") && out != text {
				t.Fatalf("template without '$' changed: %q -> %q", text, out)
			}
		}
		fuzzJSON(t, v, text, first, rest)
		fuzzURL(t, v, first, rest)
	})
}

func fuzzJSON(t *testing.T, v Values, text, first, rest string) {
	// Template text around the values, itself full of JSON escapes.
	text = strings.ReplaceAll(text, "$", "")
	enc, _ := json.Marshal(text)
	lit := string(enc[1 : len(enc)-1])
	tmpl := `{"t":` + string(enc) + `,"a":"` + lit + `$1 ` + lit + `","b":["$2+",1]}`
	if !json.Valid([]byte(tmpl)) {
		t.Fatalf("bad test template %s", tmpl)
	}
	out := Render(tmpl, JSON, v)
	var got struct {
		T string
		A string
		B []any
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("JSON output invalid: %v\ntemplate %s\noutput   %s", err, tmpl, out)
	}
	want := decoded(text) + decoded(first) + " " + decoded(text)
	if got.A != want || len(got.B) != 2 || got.B[0] != decoded(rest) || got.B[1] != 1.0 {
		t.Fatalf("JSON value changed\ntemplate %s\noutput   %s\ngot %q %v", tmpl, out, got.A, got.B)
	}
}

// decoded is s as a JSON decoder gives it back: each invalid UTF-8 byte
// becomes U+FFFD.
func decoded(s string) string { return string([]rune(s)) }

func fuzzURL(t *testing.T, v Values, first, rest string) {
	const tmpl = "https://h.test/p/$1/x?a=$2+&b=$1#frag"
	out := Render(tmpl, URL, v)
	_, query, _ := strings.Cut(out, "?")
	for _, c := range "&=#" {
		if strings.Count(query, string(c)) != strings.Count("a=$2+&b=$1#frag", string(c)) {
			t.Fatalf("URL query gained a %q: %s", c, out)
		}
	}
	u, err := url.Parse(out)
	if err != nil {
		t.Fatalf("URL output invalid: %v: %s", err, out)
	}
	seg, _ := strings.CutPrefix(u.EscapedPath(), "/p/")
	seg, _ = strings.CutSuffix(seg, "/x")
	if p, err := url.PathUnescape(seg); err != nil || p != first {
		t.Fatalf("path value = %q (%v), want %q: %s", p, err, first, out)
	}
	q := u.Query()
	if q.Get("a") != rest || q.Get("b") != first || u.Fragment != "frag" {
		t.Fatalf("query values = %q %q #%q, want %q %q: %s", q.Get("a"), q.Get("b"), u.Fragment, rest, first, out)
	}
}

// FuzzJoin checks that the items of a join reference cannot break out of
// their slots either: a JSON array of any two strings, spread into a path
// segment and a repeated query parameter, reads back as the same items.
func FuzzJoin(f *testing.F) {
	f.Add("available", "sold")
	f.Add("a,b", "c&s=d#e")
	f.Add("", "/?%20+")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return // encoding/json would change them
		}
		arg, _ := json.Marshal([]string{a, b})
		v := Values{Args: []string{string(arg)}}
		const tmpl = "https://h.test/p/$1[,]/x?s=$1[&s=]&t=1"
		if err := Check(tmpl, v); err != nil {
			t.Fatalf("Check(%s): %v", arg, err)
		}
		out := Render(tmpl, URL, v)
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("URL output invalid: %v: %s", err, out)
		}
		seg, _ := strings.CutPrefix(u.EscapedPath(), "/p/")
		seg, _ = strings.CutSuffix(seg, "/x")
		parts := strings.Split(seg, ",")
		if len(parts) != 2 {
			t.Fatalf("path items %q: %s", parts, out)
		}
		for i, want := range []string{a, b} {
			if p, err := url.PathUnescape(parts[i]); err != nil || p != want {
				t.Fatalf("path item %d = %q (%v), want %q: %s", i+1, p, err, want, out)
			}
		}
		q := u.Query()
		if s := q["s"]; len(s) != 2 || s[0] != a || s[1] != b || q.Get("t") != "1" || len(q) != 2 {
			t.Fatalf("query %v, want s=%q s=%q t=1: %s", q, a, b, out)
		}
	})
}
