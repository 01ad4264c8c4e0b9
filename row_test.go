package rowcall

import (
	"regexp"
	"strings"
	"testing"
)

// ValidKey is the key rule's regexp, written out: both agree on keys at and
// around every edge of the rule.
func TestValidKey(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
	keys := []string{"", "A", "a", "0", "_", "-", ".", "A_", "A-B.C_9", "GROK_MODELS", "a b", "a/b", "a\n", "\nA", "é", "Aé",
		"A\x00", strings.Repeat("A", 127), strings.Repeat("A", 128), strings.Repeat("A", 129), "A" + strings.Repeat("_", 127),
		"A" + strings.Repeat("_", 128), "[A]", "A:B", "A+B", "a~b"}
	for c := 0; c < 256; c++ {
		keys = append(keys, string(rune(c)), "A"+string(byte(c)), string(byte(c))+"A")
	}
	for _, k := range keys {
		if got, want := ValidKey(k), rule.MatchString(k); got != want {
			t.Errorf("ValidKey(%q) = %v, the rule says %v", k, got, want)
		}
	}
}
