package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// FuzzString proves a secret never survives String: not as itself, not URL
// escaped, not JSON escaped, and not inside base64 at any alignment, in
// either alphabet. "Survives" means an occurrence that does not overlap a
// Marker (the marker's own letters may coincide with a secret's).
func FuzzString(f *testing.F) {
	f.Add("sk-abc123", "Bearer ", " tail")
	f.Add("p@ss w/rd+=", "user:", ":")
	f.Add("DACT", "[RE", "ED]")
	f.Add("]x[R", "]x[R", "x]x[R")
	f.Add("aaaa", "aaa", "aaaaa")
	f.Add("\x00\xff\xfe\x01", "", "")
	f.Fuzz(func(t *testing.T, secret, prefix, suffix string) {
		if len(secret) < MinSecretLen {
			return
		}
		text := prefix + secret + suffix
		inputs := []string{
			text,
			url.QueryEscape(text),
			url.PathEscape(text),
			lowerHex(url.QueryEscape(text)),
			base64.StdEncoding.EncodeToString([]byte(text)),
			base64.URLEncoding.EncodeToString([]byte(text)),
			base64.RawStdEncoding.EncodeToString([]byte(text)),
			"Basic " + base64.StdEncoding.EncodeToString([]byte(secret+":")),
			"Basic " + base64.StdEncoding.EncodeToString([]byte(prefix+":"+secret)),
		}
		if j, err := json.Marshal(text); err == nil {
			inputs = append(inputs, string(j))
		}
		secrets := []string{secret}
		for _, in := range inputs {
			out := String(in, secrets)
			if leaks(out, secret) {
				t.Fatalf("secret %q survives in String(%q) = %q", secret, in, out)
			}
			// The same through Redact, nested and as a map key.
			v := Redact(map[string]any{"k": []any{in}, in: "x"}, secrets).(map[string]any)
			for k, e := range v {
				if leaks(k, secret) {
					t.Fatalf("secret %q survives in key %q", secret, k)
				}
				if s, ok := e.(string); ok && leaks(s, secret) {
					t.Fatalf("secret %q survives in value %q", secret, s)
				}
			}
			if s := v["k"].([]any)[0].(string); leaks(s, secret) {
				t.Fatalf("secret %q survives nested: %q", secret, s)
			}
		}
	})
}

// leaks reports whether out still carries secret outside a Marker: plainly,
// URL or JSON escaped, or decodable from a run of base64 characters.
func leaks(out, secret string) bool {
	forms := []string{secret, url.QueryEscape(secret), url.PathEscape(secret), lowerHex(url.QueryEscape(secret))}
	if j, err := json.Marshal(secret); err == nil {
		forms = append(forms, string(j[1:len(j)-1]))
	}
	marks := markerSpans(out)
	for _, f := range forms {
		for i := 0; i+len(f) <= len(out); i++ {
			if out[i:i+len(f)] == f && !overlaps(marks, i, i+len(f)) {
				return true
			}
		}
	}
	// Base64: every maximal run of one alphabet's characters between markers,
	// decoded at each of the four character offsets.
	for _, seg := range segments(out, marks) {
		for _, enc := range []struct {
			extra string
			enc   *base64.Encoding
		}{{"+/", base64.RawStdEncoding}, {"-_", base64.RawURLEncoding}} {
			for _, run := range base64Runs(seg, enc.extra) {
				for r := 0; r < 4 && r < len(run); r++ {
					body := run[r:]
					body = body[:len(body)/4*4]
					dec, err := enc.enc.DecodeString(body)
					if err == nil && strings.Contains(string(dec), secret) {
						return true
					}
				}
			}
		}
	}
	return false
}

func markerSpans(s string) [][2]int {
	var spans [][2]int
	for from := 0; ; {
		i := strings.Index(s[from:], Marker)
		if i < 0 {
			return spans
		}
		spans = append(spans, [2]int{from + i, from + i + len(Marker)})
		from += i + 1
	}
}

func overlaps(spans [][2]int, start, end int) bool {
	for _, sp := range spans {
		if start < sp[1] && sp[0] < end {
			return true
		}
	}
	return false
}

// segments is s with the marker spans cut out.
func segments(s string, spans [][2]int) []string {
	var out []string
	last := 0
	for _, sp := range spans {
		if sp[0] > last {
			out = append(out, s[last:sp[0]])
		}
		last = max(last, sp[1])
	}
	return append(out, s[last:])
}

// base64Runs splits s into maximal runs of base64 characters: letters,
// digits and the two characters of extra.
func base64Runs(s, extra string) []string {
	isB64 := func(c rune) bool {
		return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.ContainsRune(extra, c)
	}
	return strings.FieldsFunc(s, func(c rune) bool { return !isB64(c) })
}
