// Package jsontext writes JSON string literals the way RFC 8785 (the JSON
// Canonicalization Scheme) does: '"' and '\' escaped, the control characters
// as \b \t \n \f \r or \u00xx, everything else — '<', '>', '&', U+2028 —
// written as itself, and an invalid UTF-8 byte as \ufffd. It is the one
// writer of JSON strings by hand in rowcall: argument templating, flow
// fan-out results and canonical receipts all use it. Unescape is its one
// reader of a string's escapes (the worker's D1 rows, an MCP answer).
package jsontext

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Writer is what the characters are written to (*strings.Builder and
// *bytes.Buffer are).
type Writer interface {
	WriteString(s string) (int, error)
	WriteByte(c byte) error
}

const hexDigits = "0123456789abcdef"

// WriteChars writes s as the characters of a JSON string literal, without the
// quotes.
func WriteChars(w Writer, s string) {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || n != 1 {
				i += n
				continue
			}
		}
		w.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			w.WriteByte('\\')
			w.WriteByte(c)
		case '\b':
			w.WriteString(`\b`)
		case '\t':
			w.WriteString(`\t`)
		case '\n':
			w.WriteString(`\n`)
		case '\f':
			w.WriteString(`\f`)
		case '\r':
			w.WriteString(`\r`)
		default:
			if c >= utf8.RuneSelf {
				w.WriteString(`\ufffd`) // an invalid UTF-8 byte
			} else {
				w.WriteString(`\u00`)
				w.WriteByte(hexDigits[c>>4])
				w.WriteByte(hexDigits[c&0xf])
			}
		}
		i++
		start = i
	}
	w.WriteString(s[start:])
}

// Write writes s as a JSON string literal, quotes included.
func Write(w Writer, s string) {
	w.WriteByte('"')
	WriteChars(w, s)
	w.WriteByte('"')
}

// Space is JSON's whitespace.
const Space = " \t\r\n"

// PlainString reads the JSON string literal that s starts with when it has no
// escape and no control character: value is its characters, rest what follows
// the closing quote. ok is false for anything else (no literal, an escape, a
// control character, no closing quote), which a caller hands to a full JSON
// decoder. s must be valid UTF-8 (a decoder replaces invalid bytes; value
// would not).
func PlainString(s string) (value, rest string, ok bool) {
	if len(s) == 0 || s[0] != '"' {
		return "", s, false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[1:i], s[i+1:], true
		case c < 0x20 || c == '\\':
			return "", s, false
		}
	}
	return "", s, false
}

// Unescape decodes the escapes of a JSON string's contents (without its
// quotes), as encoding/json does; ok is false for what it leaves to a JSON
// decoder: a malformed escape or a lone surrogate.
func Unescape(raw string) (string, bool) {
	b := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if i+1 >= len(raw) {
			return "", false
		}
		i++
		switch raw[i] {
		case '"', '\\', '/':
			b = append(b, raw[i])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
					return "", false
				}
				r2, ok := hex4(raw, i+3)
				if r = utf16.DecodeRune(r, r2); !ok || r == utf8.RuneError {
					return "", false
				}
				i += 6
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
	}
	return string(b), true
}

// hex4 reads the four hexadecimal digits of a \u escape at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i:i+4], 16, 16)
	return rune(n), err == nil
}
