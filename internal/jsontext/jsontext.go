// Package jsontext writes JSON string literals the way RFC 8785 (the JSON
// Canonicalization Scheme) does: '"' and '\' escaped, the control characters
// as \b \t \n \f \r or \u00xx, everything else — '<', '>', '&', U+2028 —
// written as itself, and an invalid UTF-8 byte as \ufffd. It is the one
// writer of JSON strings by hand in rowcall: argument templating, flow
// fan-out results and canonical receipts all use it.
package jsontext

import "unicode/utf8"

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
