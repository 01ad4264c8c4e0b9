// Package leak is the redaction tests' oracle: it spells a secret the ways an
// upstream's echo might (Encodings) and finds what is left of a secret in a
// text through every decoding a client could apply (Views, Fragment).
//
// A test encodes a secret into some text, passes the text through the code
// under test, and asks Fragment whether any FragmentLen bytes of the secret
// can still be read from the result that could not be read from the same
// text with the secret replaced by bytes foreign to it (Foreign), since the
// surrounding text may hold such bytes by itself:
//
//	ctx := leak.Views(prefix + enc(leak.Foreign(secret)) + suffix)
//	if frag := leak.Fragment(secret, leak.Views(out), ctx); frag != "" { … }
package leak

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/rowcall/rowcall/internal/redact"
)

// FragmentLen is the length of the shortest fragment of a secret that counts
// as a leak (all of a shorter secret counts).
const FragmentLen = 8

// An Encoding spells a text the way a client, server or echo might. A Whole
// encoding is meant for a complete text (prefix+secret+suffix, as a base64
// body would be); the others for the secret alone, inside raw text. Enc draws
// its random choices (which characters to escape, which hex case) from r.
type Encoding struct {
	Name  string
	Whole bool
	Enc   func(s string, r *rand.Rand) string
}

// Encodings are the spellings the redaction tests try.
var Encodings = []Encoding{
	{"plain", false, func(s string, _ *rand.Rand) string { return s }},
	{"json", false, func(s string, _ *rand.Rand) string { return JSONString(s) }},
	{"json \\u subset any case, \\/", false, JSONSubset},
	{"percent subset any case", false, PercentSubset},
	{"QueryEscape", false, func(s string, _ *rand.Rand) string { return url.QueryEscape(s) }},
	{"QueryEscape lower hex", false, func(s string, _ *rand.Rand) string { return LowerHex(url.QueryEscape(s)) }},
	{"PathEscape", false, func(s string, _ *rand.Rand) string { return url.PathEscape(s) }},
	{"PathEscape lower hex", false, func(s string, _ *rand.Rand) string { return LowerHex(url.PathEscape(s)) }},
	{"encodeURIComponent", false, func(s string, _ *rand.Rand) string { return EncodeURIComponent(s) }},
	{"json of whole text", true, func(s string, _ *rand.Rand) string { return JSONString(s) }},
	{"base64 std", true, func(s string, _ *rand.Rand) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64 url", true, func(s string, _ *rand.Rand) string { return base64.URLEncoding.EncodeToString([]byte(s)) }},
	{"base64 std raw", true, func(s string, _ *rand.Rand) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }},
	{"base64 url raw", true, func(s string, _ *rand.Rand) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }},
	{"base64 std in json with \\/", true, func(s string, _ *rand.Rand) string {
		return strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(s)), "/", `\/`)
	}},
	{"base64 std query-escaped", true, func(s string, _ *rand.Rand) string {
		return url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(s)))
	}},
}

// Foreign is a text as long as secret made of one control byte secret
// lacks, or "" when it has them all.
func Foreign(secret string) string {
	for c := byte(1); c < 0x20; c++ {
		if strings.IndexByte(secret, c) < 0 {
			return strings.Repeat(string(rune(c)), len(secret))
		}
	}
	return ""
}

// Fragment returns the first FragmentLen bytes of secret (all of a shorter
// secret) found in the views out and not in the views ctx, or "".
func Fragment(secret string, out, ctx []string) string {
	n := min(FragmentLen, len(secret))
	for i := 0; i+n <= len(secret); i++ {
		w := secret[i : i+n]
		if containsAny(out, w) && !containsAny(ctx, w) {
			return w
		}
	}
	return ""
}

func containsAny(vs []string, w string) bool {
	for _, v := range vs {
		if strings.Contains(v, w) {
			return true
		}
	}
	return false
}

// Views is every decoding of the pieces of s between redaction markers: the
// piece itself, JSON-unescaped, percent-decoded ('+' as a space or not), and
// the base64 decoding of every run in each of those at every offset. A
// trailing "…" and a marker cut short at the end are dropped first (what a
// redact.Clip leaves).
func Views(s string) []string {
	s = strings.TrimSuffix(s, "…")
	for k := len(redact.Marker) - 1; k > 0; k-- {
		if strings.HasSuffix(s, redact.Marker[:k]) {
			s = s[:len(s)-k]
			break
		}
	}
	var out []string
	for _, seg := range strings.Split(s, redact.Marker) {
		for _, v := range []string{seg, unJSON(seg), unPercent(seg, true), unPercent(seg, false)} {
			out = append(out, v)
			out = append(out, unBase64(v)...)
		}
	}
	return out
}

// unJSON decodes the JSON string escapes in s, leaving anything else as it is.
func unJSON(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if c, ok := map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[s[i+1]]; ok {
			b.WriteByte(c)
			i++
			continue
		}
		r1, ok := hex4(s, i)
		if !ok {
			b.WriteByte(s[i])
			continue
		}
		i += 5
		if r2, ok := hex4(s, i+1); ok && utf16.IsSurrogate(r1) && utf16.DecodeRune(r1, r2) != utf8.RuneError {
			r1 = utf16.DecodeRune(r1, r2)
			i += 6
		}
		b.WriteRune(r1)
	}
	return b.String()
}

func hex4(s string, i int) (rune, bool) {
	if i+6 > len(s) || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	r, err := strconv.ParseUint(s[i+2:i+6], 16, 16)
	return rune(r), err == nil
}

// unPercent decodes %XX escapes (and '+' as a space when plus) in s.
func unPercent(s string, plus bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '+' && plus {
			b.WriteByte(' ')
			continue
		}
		if s[i] == '%' && i+2 < len(s) {
			if d, err := url.PathUnescape(s[i : i+3]); err == nil {
				b.WriteString(d)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unBase64 decodes every maximal run of base64 characters of s, in both
// alphabets, at each of the four character offsets.
func unBase64(s string) []string {
	var out []string
	for _, enc := range []struct {
		extra string
		enc   *base64.Encoding
	}{{"+/", base64.RawStdEncoding}, {"-_", base64.RawURLEncoding}} {
		for _, run := range base64Runs(s, enc.extra) {
			for r := 0; r < 4 && r < len(run); r++ {
				body := run[r:]
				body = body[:len(body)/4*4]
				if dec, err := enc.enc.DecodeString(body); err == nil {
					out = append(out, string(dec))
				}
			}
		}
	}
	return out
}

// base64Runs splits s into maximal runs of base64 characters: letters,
// digits and the two characters of extra.
func base64Runs(s, extra string) []string {
	isB64 := func(c rune) bool {
		return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.ContainsRune(extra, c)
	}
	return strings.FieldsFunc(s, func(c rune) bool { return !isB64(c) })
}

// JSONString is s as the inside of a JSON string literal (encoding/json,
// HTML-safe).
func JSONString(s string) string {
	j, _ := json.Marshal(s)
	return string(j[1 : len(j)-1])
}

// JSONSubset JSON-escapes s with a random subset of its characters written
// \uXXXX in random hex case (surrogate pairs beyond the BMP) and each '/'
// written \/ or not at random; '"', '\' and controls are always escaped.
func JSONSubset(s string, r *rand.Rand) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '/' && r.IntN(2) == 0:
			b.WriteString(`\/`)
		case c == '"' || c == '\\' || c < 0x20 || r.IntN(2) == 0:
			var units []uint16
			if c > 0xFFFF {
				r1, r2 := utf16.EncodeRune(c)
				units = []uint16{uint16(r1), uint16(r2)}
			} else {
				units = []uint16{uint16(c)}
			}
			for _, u := range units {
				h := fmt.Sprintf(`\u%04x`, u)
				if r.IntN(2) == 0 {
					h = `\u` + strings.ToUpper(h[2:])
				}
				b.WriteString(h)
			}
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// PercentSubset percent-escapes a random subset of the bytes of s in random
// hex case; '%', '+' and a space (as '+' or %20) always.
func PercentSubset(s string, r *rand.Rand) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' && r.IntN(2) == 0:
			b.WriteByte('+')
		case c == '%' || c == '+' || c == ' ' || r.IntN(2) == 0:
			h := fmt.Sprintf("%%%02x", c)
			if r.IntN(2) == 0 {
				h = strings.ToUpper(h)
			}
			b.WriteString(h)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// EncodeURIComponent is JavaScript's: everything but A–Z a–z 0–9 - _ . ! ~ *
// ' ( ) is escaped, in upper-case hex.
func EncodeURIComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// LowerHex rewrites the hex digits of every %XX escape in lower case.
func LowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lower(b[i+1]), lower(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
