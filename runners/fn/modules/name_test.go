package modules

import (
	"regexp"
	"strings"
	"testing"
)

// ValidName is the name rule's regexp, written out: both agree on names at
// and around every edge of the rule.
func TestValidName(t *testing.T) {
	rule := regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)
	names := []string{"", "a", "0", "_", "-", ".", "now", "last_reply_of", "a.b-c_9", "NOW", "nOw", "a@1", "a b", "a/b", "a\n", "é",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65), "a" + strings.Repeat("-", 63), "a" + strings.Repeat("-", 64)}
	for c := 0; c < 256; c++ {
		names = append(names, string(rune(c)), "a"+string(byte(c)), string(byte(c))+"a")
	}
	for _, n := range names {
		if got, want := ValidName(n), rule.MatchString(n); got != want {
			t.Errorf("ValidName(%q) = %v, the rule says %v", n, got, want)
		}
	}
}
