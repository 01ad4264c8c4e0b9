package redact

import "testing"

// Untrusted text cannot open a line of its own, move a terminal's cursor or
// reorder what is shown: control and format characters are blanks.
func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"Opens an issue.\n# AUTH: none":         "Opens an issue. # AUTH: none",
		"KEY\x1b[2J\u009b31m":                   "KEY [2J 31m",
		"a\u202edcb\u200b e\u2028f\r\n\tg  ":    "a dcb e f g",
		"plain words stay as they are, ünïcode": "plain words stay as they are, ünïcode",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}
