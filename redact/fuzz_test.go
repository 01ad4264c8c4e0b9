package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// An encoding spells a secret the way a client, server or echo might. A
// whole encoding is applied to the complete text (prefix+secret+suffix, as a
// base64 body would be); the others to the secret alone, inside raw text.
type encoding struct {
	name  string
	whole bool
	enc   func(s string, r *rand.Rand) string
}

var encodings = []encoding{
	{"plain", false, func(s string, _ *rand.Rand) string { return s }},
	{"json", false, func(s string, _ *rand.Rand) string { return jsonString(s) }},
	{"json \\u subset any case, \\/", false, jsonSubset},
	{"percent subset any case", false, percentSubset},
	{"QueryEscape", false, func(s string, _ *rand.Rand) string { return url.QueryEscape(s) }},
	{"QueryEscape lower hex", false, func(s string, _ *rand.Rand) string { return lowerHex(url.QueryEscape(s)) }},
	{"PathEscape", false, func(s string, _ *rand.Rand) string { return url.PathEscape(s) }},
	{"PathEscape lower hex", false, func(s string, _ *rand.Rand) string { return lowerHex(url.PathEscape(s)) }},
	{"encodeURIComponent", false, func(s string, _ *rand.Rand) string { return encodeURIComponent(s) }},
	{"json of whole text", true, func(s string, _ *rand.Rand) string { return jsonString(s) }},
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

// basic is the oauth client's Basic credential: base64(id:QueryEscape(secret)).
func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// FuzzString proves that no fragment of a secret of 8 or more bytes (the whole
// secret when it is shorter) survives String, Redact or Clip at any cut
// length, for every encoding above of the secret embedded in other text,
// looking at the output plainly and through every decoding a client could
// apply (JSON unescaping, percent-decoding with and without '+' as space,
// base64 of any run at any offset, and base64 inside those). "Survives" means
// present in the output but not in the same text with the secret replaced by
// bytes foreign to it (the surrounding text may hold fragments by itself).
func FuzzString(f *testing.F) {
	f.Add("sk-abc123", "Bearer ", " tail", uint64(1))
	f.Add("p@ss w/rd+=", "user:", ":", uint64(2))
	f.Add("sk-live-abc/def+ghi!'()*~", `{"echo":"`, `"}`, uint64(3))
	f.Add("DACT", "[RE", "ED]", uint64(4))
	f.Add("]x[R", "]x[R", "x]x[R", uint64(5))
	f.Add("aaaa", "aaa", "aaaaa", uint64(6))
	f.Add("%25%\\\\\\u00", "%", "\\", uint64(7))
	f.Add("ключ-секрет-😀-значение", "key=", "&x=1", uint64(8))
	f.Add("0123456789abcdefghijklmnopqrstuvwxyzABCDEF", "error: invalid key ", ".", uint64(9))
	f.Fuzz(property)
}

// property is FuzzString's check for one input; seed drives the random
// subsets and hex cases.
func property(t *testing.T, secret, prefix, suffix string, seed uint64) {
	{
		if len(secret) < MinSecretLen || len(secret) > 40 || len(prefix)+len(suffix) > 40 || !utf8.ValidString(secret) {
			return
		}
		filler := foreign(secret)
		if filler == "" {
			return
		}
		secrets := []string{secret}
		check := func(name, in, ctxText string) {
			ctx := views(ctxText)
			if frag := survives(String(in, secrets), secret, ctx); frag != "" {
				t.Fatalf("%s: fragment %q of secret %q survives String(%q) = %q", name, frag, secret, in, String(in, secrets))
			}
			for n := 0; n <= len(in)+1; n++ {
				out := Clip(in, n, secrets)
				if len(out) > n+len("…") && n < len(String(in, secrets)) {
					t.Fatalf("%s: Clip(%q, %d) = %q is longer than the cut", name, in, n, out)
				}
				if frag := survives(out, secret, ctx); frag != "" {
					t.Fatalf("%s: fragment %q of secret %q survives Clip(%q, %d) = %q", name, frag, secret, in, n, out)
				}
			}
			// The same through Redact, nested and as a map key.
			v := Redact(map[string]any{"k": []any{in}, in: "x"}, secrets).(map[string]any)
			for k := range v {
				if frag := survives(k, secret, ctx); frag != "" {
					t.Fatalf("%s: fragment %q survives in key %q", name, frag, k)
				}
			}
			if s := v["k"].([]any)[0].(string); survives(s, secret, ctx) != "" {
				t.Fatalf("%s: secret %q survives nested: %q", name, secret, s)
			}
		}
		for _, e := range encodings {
			r := rand.New(rand.NewPCG(seed, 7))
			rc := rand.New(rand.NewPCG(seed, 7))
			if e.whole {
				check(e.name, e.enc(prefix+secret+suffix, r), e.enc(prefix+filler+suffix, rc))
			} else {
				check(e.name, prefix+e.enc(secret, r)+suffix, prefix+e.enc(filler, rc)+suffix)
			}
		}
		check("basic", basic(prefix, secret), basic(prefix, filler))
	}
}

// TestClipEveryEncoding runs the fuzz property over fixed secrets and texts
// with many random subsets, so plain `go test` covers more than the seeds.
func TestClipEveryEncoding(t *testing.T) {
	secrets := []string{"sk-live-0123456789abcdef", "p@ss w/rd+=!'()*~x", "tok\"with\\quote/slash", "ключ-секрет-😀"}
	for i, sec := range secrets {
		for seed := range uint64(20) {
			t.Run(fmt.Sprint(i, "/", seed), func(t *testing.T) {
				property(t, sec, "answer: ", ` and more`, seed)
			})
		}
	}
}

// foreign is a text as long as secret made of one byte secret lacks.
func foreign(secret string) string {
	for c := byte(1); c < 0x20; c++ {
		if strings.IndexByte(secret, c) < 0 {
			return strings.Repeat(string(rune(c)), len(secret))
		}
	}
	return ""
}

// survives returns a fragment of secret (8 bytes, or all of a shorter
// secret) that out shows in some decoding and ctxViews do not, or "".
func survives(out, secret string, ctxViews []string) string {
	L := min(8, len(secret))
	outViews := views(out)
	for i := 0; i+L <= len(secret); i++ {
		w := secret[i : i+L]
		if containsAny(outViews, w) && !containsAny(ctxViews, w) {
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

// views is every decoding of the pieces of s between markers: the piece
// itself, JSON-unescaped, percent-decoded ('+' as space or not), and the
// base64 decoding of every run in each of those at every offset.
func views(s string) []string {
	s = strings.TrimSuffix(s, "…")
	for k := len(Marker) - 1; k > 0; k-- { // a marker cut by Clip
		if strings.HasSuffix(s, Marker[:k]) {
			s = s[:len(s)-k]
			break
		}
	}
	var out []string
	for _, seg := range strings.Split(s, Marker) {
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

// jsonString is s as the inside of a JSON string literal (encoding/json,
// HTML-safe).
func jsonString(s string) string {
	j, _ := json.Marshal(s)
	return string(j[1 : len(j)-1])
}

// jsonSubset JSON-escapes s with a random subset of its characters written
// \uXXXX in random hex case (surrogate pairs beyond the BMP) and each '/'
// written \/ or not at random; '"', '\' and controls are always escaped.
func jsonSubset(s string, r *rand.Rand) string {
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

// percentSubset percent-escapes a random subset of the bytes of s in random
// hex case; '%', '+' and a space (as '+' or %20) always.
func percentSubset(s string, r *rand.Rand) string {
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

// encodeURIComponent is JavaScript's: everything but A–Z a–z 0–9 - _ . ! ~ * ' ( ) is escaped.
func encodeURIComponent(s string) string {
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

// lowerHex rewrites the hex digits of every %XX escape in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = byte(strings.ToLower(string(b[i+1]))[0]), byte(strings.ToLower(string(b[i+2]))[0])
			i += 2
		}
	}
	return string(b)
}
