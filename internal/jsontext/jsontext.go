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
