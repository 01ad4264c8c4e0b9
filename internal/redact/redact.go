// Package redact removes credential material from strings and from decoded
// JSON-like values before they are shown or kept (answers, shape-mode
// previews, receipts, error messages).
//
// Use String for a text, Redact for a value, and Clip (never a plain slice)
// to shorten a text that may carry a secret: Clip redacts first, then cuts.
// Line makes untrusted text one line, safe to keep or show (no control or
// format characters), before it is redacted.
//
// Two rules, applied together:
//
//  1. Names. A map entry whose key is a credential name is removed entirely
//     (not blanked), at any depth, so a redacted header and a header that was
//     never set look the same: a request whose only header was Authorization
//     previews as "headers":{}. A credential name is, compared
//     case-insensitively with '-' read as '_': authorization,
//     proxy_authorization, x_api_key, api_key, cookie, set_cookie, or any name
//     ending in _api_key, _token or _secret (GROK_API_KEY, X-Auth-Token,
//     access_token, client_secret).
//
//  2. Values. Every occurrence of a secret value, in any string (map keys
//     included), is replaced with [REDACTED], in any spelling a client could
//     decode back to the secret. The text is read the way a decoder reads it:
//     each character stands either for itself or, starting an escape, for
//     what the escape decodes to: a JSON string escape (\uXXXX in either hex
//     case, surrogate pairs included, and \/ \" \\ \b \f \n \r \t), a percent
//     escape (%XX in either case), or '+' for a space. Any mix counts, so
//     every percent-encoding variant (url.QueryEscape, url.PathEscape,
//     JavaScript's encodeURIComponent, which keeps !'()* raw, or escaping
//     more characters than needed) and every JSON encoding (any subset of
//     characters \u-escaped, / written \/, HTML-safe escaping) is found, and
//     the whole escaped span is replaced. Base64 is found too (standard and
//     URL alphabets, padded or not, at any byte alignment inside a longer
//     encoded text, which covers "Basic base64(user:pass)", also when pass was
//     query-escaped before encoding), its characters read through the same
//     escapes (a JSON encoder's \/). For base64 the characters that depend
//     only on the secret's bytes are replaced; the one or two boundary
//     characters shared with neighbouring bytes stay, and carry at most a few
//     bits of the secret.
//
// Not found: a secret encoded twice (%252F, a JSON-escaped percent escape),
// in an encoding not listed (HTML entities, hex, Go's \x escapes), or
// transformed (hashed, reversed, only a part echoed): the upstream decides
// what it sends back, and redaction removes only what it can recognise. A
// secret that is not valid UTF-8 is found only where its bytes appear as
// themselves or %-escaped, since JSON encoders replace invalid bytes.
//
// Secrets shorter than MinSecretLen bytes are not searched for: a one-to-three
// byte value occurs by chance in ordinary text, so replacing it would shred
// every result without protecting anything. Callers that inject such a value
// must keep it out of what they show structurally (the http runner removes its
// credential headers and writes the query credential as [REDACTED] itself).
//
// The marker is fixed and may itself contain a secret's characters; the
// guarantee is that every remaining occurrence of a secret (in any of the
// spellings above) overlaps a [REDACTED] marker, so no secret byte survives in
// the original text around the markers. Clip keeps that guarantee for every
// cut length and also drops a cut text's last characters when they spell the
// first MinSecretLen or more bytes of a secret (or of its base64 run), so a
// cut never leaves the beginning of a secret at its edge.
package redact

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Marker replaces every redacted value.
const Marker = "[REDACTED]"

// MinSecretLen is the shortest secret String searches for, in bytes.
const MinSecretLen = 4

// String returns s with every occurrence of every secret (in any of the
// spellings the package doc lists) replaced by Marker. Secrets shorter than
// MinSecretLen are ignored.
func String(s string, secrets []string) string {
	if s == "" {
		return s
	}
	return replace(s, needles(secrets))
}

// Clip is String(s, secrets) cut to at most n bytes, on a character
// boundary, with "…" appended when anything was cut. The cut is made after
// redacting, so it cannot split a secret into pieces too short to be found,
// and when the cut text ends with the first MinSecretLen or more bytes of a
// secret (in any spelling), those characters are dropped too. With no secrets
// Clip only cuts.
func Clip(s string, n int, secrets []string) string {
	ns := needles(secrets)
	s = replace(s, ns)
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:edge(s[:n], ns)] + "…"
}

// edge is where a cut text t should end: len(t), or the start of a trailing
// run of characters that spells the first MinSecretLen or more bytes of a
// needle.
func edge(t string, ns []string) int {
	cut := len(t)
	for _, n := range ns {
		m := matcher{s: t, pat: n, prefix: true}
		// No escape is longer than 12 bytes (a surrogate pair) and none
		// stands for fewer than one byte, so a partial needle starts here or later.
		for p := max(0, len(t)-12*len(n)); p < cut; p++ {
			if m.candidate(p) && m.at(p, 0) >= 0 {
				cut = p
				break
			}
		}
	}
	for cut > 0 && cut < len(t) && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return cut
}

// replace covers every occurrence of every needle, overlapping ones included,
// and writes one Marker per merged run of covered bytes. A single pass is
// enough: text between two markers is an unbroken slice of s, and a match
// inside a slice is a match in s, so that text contained no needle.
func replace(s string, ns []string) string {
	var spans [][2]int
	var firsts [256]bool
	for _, n := range ns {
		firsts[n[0]] = true
	}
	escapes := escapesIn(s, &firsts)
	var starts []int
	for _, n := range ns {
		m := matcher{s: s, pat: n}
		starts = starts[:0]
		for _, e := range escapes {
			if e.first == n[0] {
				starts = append(starts, e.pos)
			}
		}
		next := candidates(s, n[0], starts)
		for p := next(); p >= 0; p = next() {
			if end := m.at(p, 0); end >= 0 {
				spans = append(spans, [2]int{p, end})
			}
		}
	}
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[last:start])
		b.WriteString(Marker)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// escape is a complete escape in a text: where it starts and the first byte
// it stands for.
type escape struct {
	pos   int
	first byte
}

// escapesIn lists, in order, the complete escapes of s that stand for a byte
// some needle starts with.
func escapesIn(s string, firsts *[256]bool) []escape {
	var out []escape
	var dec [4]byte
	// The next '%', '\\' and '+' at or after i, found with IndexByte (fast
	// on long runs of ordinary text); len(s) when there is none.
	next := [3]int{-1, -1, -1}
	for i := 0; ; i++ {
		for c, b := range []byte{'%', '\\', '+'} {
			if next[c] < i {
				if j := strings.IndexByte(s[i:], b); j >= 0 {
					next[c] = i + j
				} else {
					next[c] = len(s)
				}
			}
		}
		if i = min(next[0], next[1], next[2]); i >= len(s) {
			return out
		}
		if k, n := decodeAt(s, i, &dec); k > 0 && n > 0 && firsts[dec[0]] {
			out = append(out, escape{i, dec[0]})
		}
	}
}

// candidates yields, in order and then -1, every position of s where a match
// of a needle starting with first can begin: an occurrence of first itself or
// one of starts, the escapes standing for first.
func candidates(s string, first byte, starts []int) func() int {
	lit, e := -1, 0
	from := 0
	return func() int {
		if lit < from {
			if i := strings.IndexByte(s[from:], first); i >= 0 {
				lit = from + i
			} else {
				lit = len(s)
			}
		}
		for e < len(starts) && starts[e] < from {
			e++
		}
		p := lit
		if e < len(starts) && starts[e] < p {
			p = starts[e]
		}
		if p >= len(s) {
			return -1
		}
		from = p + 1
		return p
	}
}

// matcher matches one needle pat against the text s read through escapes.
type matcher struct {
	s, pat string
	// prefix matches only at the end of s: s[i:] spells pat, or its first
	// MinSecretLen or more bytes (the text was cut inside an occurrence).
	prefix bool
	dead   map[[2]int]bool // branch points (i, j) known not to match
}

// candidate reports whether a match may start at s[p].
func (m *matcher) candidate(p int) bool {
	c := m.s[p]
	return c == m.pat[0] || c == '%' || c == '\\' || c == '+'
}

// at matches pat[j:] against s[i:] and returns the end of the match in s, or
// -1. Where a character matches both as itself and through an escape ('%'
// and "%25", '\' and "\\"), both readings are tried; dead remembers the
// branch points that failed, so the work stays linear in practice and
// quadratic at worst.
func (m *matcher) at(i, j int) int {
	for j < len(m.pat) {
		if i >= len(m.s) {
			return m.ranOut(j)
		}
		c := m.s[i]
		lit := c == m.pat[j]
		if c != '%' && c != '\\' && c != '+' {
			if !lit {
				return -1
			}
			i, j = i+1, j+1
			continue
		}
		var dec [4]byte
		k, n := decodeAt(m.s, i, &dec)
		if n < 0 {
			// A truncated escape ends the text.
			if e := m.ranOut(j); e >= 0 || !lit {
				return e
			}
		}
		esc := n > 0 && k <= len(m.pat)-j && dec[0] == m.pat[j] && (k == 1 || string(dec[1:k]) == m.pat[j+1:j+k])
		switch {
		case lit && esc:
			key := [2]int{i, j}
			if m.dead[key] {
				return -1
			}
			if e := m.at(i+1, j+1); e >= 0 {
				return e
			}
			if e := m.at(i+n, j+k); e >= 0 {
				return e
			}
			if m.dead == nil {
				m.dead = map[[2]int]bool{}
			}
			m.dead[key] = true
			return -1
		case lit:
			i, j = i+1, j+1
		case esc:
			i, j = i+n, j+k
		default:
			return -1
		}
	}
	if m.prefix && i < len(m.s) {
		return -1 // a whole occurrence followed by more text is no cut edge
	}
	return i
}

// ranOut is the result of reaching the end of the text with pat[:j] matched.
func (m *matcher) ranOut(j int) int {
	if m.prefix && j >= MinSecretLen {
		return len(m.s)
	}
	return -1
}

// decodeAt reads the escape starting at s[i], if any: it writes the bytes the
// escape stands for into dec and returns their count k and the escape's
// length n in s. n is 0 when s[i] starts no escape and -1 when s ends inside
// what could be one.
func decodeAt(s string, i int, dec *[4]byte) (k, n int) {
	rest := s[i:]
	switch rest[0] {
	case '+':
		dec[0] = ' '
		return 1, 1
	case '%':
		if len(rest) < 3 {
			return 0, truncated(rest[1:], 2)
		}
		hi, ok1 := unhex(rest[1])
		lo, ok2 := unhex(rest[2])
		if !ok1 || !ok2 {
			return 0, 0
		}
		dec[0] = hi<<4 | lo
		return 1, 3
	case '\\':
		if len(rest) < 2 {
			return 0, -1
		}
		if c := jsonEscape(rest[1]); c != 0 {
			dec[0] = c
			return 1, 2
		}
		if rest[1] != 'u' {
			return 0, 0
		}
		r, n := unicodeEscape(rest)
		if n <= 0 {
			return 0, n
		}
		if utf16.IsSurrogate(r) {
			// A pair decodes to one character; a lone half to U+FFFD, as
			// encoding/json does.
			r2, n2 := unicodeEscape(rest[n:])
			if n2 < 0 {
				return 0, -1
			}
			if pair := utf16.DecodeRune(r, r2); n2 > 0 && pair != utf8.RuneError {
				r, n = pair, n+n2
			} else {
				r = utf8.RuneError
			}
		}
		return utf8.EncodeRune(dec[:], r), n
	}
	return 0, 0
}

// unicodeEscape reads \uXXXX at the start of s: the code unit and 6, 0 when s
// does not start with one, -1 when s ends inside one.
func unicodeEscape(s string) (rune, int) {
	if len(s) < 6 {
		if len(s) >= 2 && s[:2] == `\u` {
			return 0, truncated(s[2:], 4)
		}
		if s == `\` {
			return 0, -1
		}
		return 0, 0
	}
	if s[:2] != `\u` {
		return 0, 0
	}
	var r rune
	for _, c := range []byte(s[2:6]) {
		v, ok := unhex(c)
		if !ok {
			return 0, 0
		}
		r = r<<4 | rune(v)
	}
	return r, 6
}

// truncated is -1 when h, shorter than want, could begin want hex digits, else 0.
func truncated(h string, want int) int {
	if len(h) >= want {
		return 0
	}
	for _, c := range []byte(h) {
		if _, ok := unhex(c); !ok {
			return 0
		}
	}
	return -1
}

// jsonEscape is what JSON's two-character escape \c stands for, or 0.
func jsonEscape(c byte) byte {
	switch c {
	case '"', '\\', '/':
		return c
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return 0
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// needles lists what to search for, deduplicated: each secret and the base64
// runs that carry it (see base64Cores), also of its query-escaped form (a
// Basic credential built from escaped parts, as RFC 6749 §2.3.1 asks).
func needles(secrets []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if len(n) > 0 && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, sec := range secrets {
		if len(sec) < MinSecretLen {
			continue
		}
		add(sec)
		for _, core := range base64Cores(sec) {
			add(core)
		}
		if q := url.QueryEscape(sec); q != sec {
			for _, core := range base64Cores(q) {
				add(core)
			}
		}
	}
	return out
}

// base64Cores returns, for each of the three byte alignments a secret can have
// inside a longer plaintext, and for both alphabets, the run of base64
// characters that is determined by the secret's bytes alone. Any base64 text
// whose plaintext contains the secret contains one of these runs.
func base64Cores(sec string) []string {
	var out []string
	n := len(sec)
	for k := 0; k < 3; k++ {
		plain := strings.Repeat("\x00", k) + sec
		first := (8*k + 5) / 6  // first character whose 6 bits all lie in the secret
		last := (8*k + 8*n) / 6 // one past the last such character
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			full := enc.EncodeToString([]byte(plain))
			if last > first && last <= len(full) {
				out = append(out, full[first:last])
			}
		}
	}
	return out
}
