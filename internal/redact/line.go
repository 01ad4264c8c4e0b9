package redact

import (
	"strings"
	"unicode"
)

// Line is untrusted text made one line that is safe to keep in a docstring
// or show on a terminal: control characters (newlines and escapes included)
// and format characters (bidirectional overrides, zero-width ones) become
// spaces, and each run of blanks becomes one. It removes no secret: pass the
// result to String or Clip for that.
func Line(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ") // U+2028 and U+2029 are blanks to Fields
}
