// Package redact removes credential material from strings and from decoded
// JSON-like values before they are shown or kept (shape-mode previews,
// receipts, error messages).
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
//     included), is replaced with [REDACTED]. Besides the plain value the
//     encoded forms a credential travels in are found too: URL query and path
//     escaping (upper- and lower-case hex), JSON string escaping, and base64
//     (standard and URL alphabets, padded or not, at any byte alignment inside
//     a longer encoded text, which covers "Basic base64(user:pass)"). For
//     base64 the characters that depend only on the secret's bytes are
//     replaced; the one or two boundary characters shared with neighbouring
//     bytes stay, and carry at most a few bits of the secret.
//
// Secrets shorter than MinSecretLen bytes are not searched for: a one-to-three
// byte value occurs by chance in ordinary text, so replacing it would shred
// every result without protecting anything. Callers that inject such a value
// must keep it out of what they show structurally (the http runner removes its
// credential headers and writes the query credential as [REDACTED] itself).
//
// The marker is fixed and may itself contain a secret's characters; the
// guarantee is that every remaining occurrence of a secret (or of one of its
// encoded forms) overlaps a [REDACTED] marker, so no secret byte survives in
// the original text around the markers.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

// Marker replaces every redacted value.
const Marker = "[REDACTED]"

// MinSecretLen is the shortest secret String searches for, in bytes.
const MinSecretLen = 4

// String returns s with every occurrence of every secret (and of its encoded
// forms) replaced by Marker. Secrets shorter than MinSecretLen are ignored.
func String(s string, secrets []string) string {
	if s == "" {
		return s
	}
	return replace(s, needles(secrets))
}

// replace covers every occurrence of every needle, overlapping ones included,
// and writes one Marker per merged run of covered bytes. A single pass is
// enough: text between two markers is an unbroken slice of s that contained no
// needle.
func replace(s string, ns []string) string {
	var spans [][2]int
	for _, n := range ns {
		for from := 0; from <= len(s)-len(n); {
			i := strings.Index(s[from:], n)
			if i < 0 {
				break
			}
			start := from + i
			spans = append(spans, [2]int{start, start + len(n)})
			from = start + 1
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

// needles lists every form of every secret worth searching for, deduplicated.
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
		for _, e := range []string{url.QueryEscape(sec), url.PathEscape(sec)} {
			add(e)
			add(lowerHex(e))
		}
		add(jsonEscape(sec, true))
		add(jsonEscape(sec, false))
		for _, core := range base64Cores(sec) {
			add(core)
		}
	}
	return out
}

// lowerHex rewrites the hex digits of every %XX escape in lower case.
func lowerHex(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] = lower(b[i+1])
			b[i+2] = lower(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// jsonEscape is sec as it appears inside a JSON string literal.
func jsonEscape(sec string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(sec); err != nil {
		return ""
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
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
