package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// A printed call gives the row its example body back exactly when a shell
// reads it, whatever the body holds, and no control character reaches the
// terminal raw.
func TestShellQuoteRoundTrips(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, body := range []string{
		"hello wörld",
		`it's "quoted" $HOME \n`,
		"a|b; rm -rf / #",
		"esc \x1b[31mred\x1b[0m, tab\tand\nnewline",
		"c1 \u009b31m and del \x7f and a lone '",
	} {
		word := shellQuote(body)
		if strings.ContainsFunc(word, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }) {
			t.Errorf("%q: a control character printed raw: %q", body, word)
		}
		out, err := exec.Command(bash, "-c", "printf %s "+word).Output()
		if err != nil || string(out) != body {
			t.Errorf("%q: bash read %s back as %q (%v)", body, word, out, err)
		}
	}
}
