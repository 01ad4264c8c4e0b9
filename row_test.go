package rowcall

import (
	"regexp"
	"slices"
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

// Who wrote a row is not part of what it does: its contract and its hygiene
// are the same whoever wrote it.
func TestWrittenByIsNotTheContract(t *testing.T) {
	r := NewRow("W", TypeHTTP)
	r.Target, r.Content, r.Sensitive = "GET https://api.example.test/$1", "# WHAT: w", 1
	before, violations := ContractFingerprint(&r, "", nil), r.Hygiene()
	for _, by := range []string{"owner:terminal-key", "person:per_x"} {
		r.WrittenBy = by
		if got := ContractFingerprint(&r, "", nil); got != before {
			t.Fatalf("written_by %q changed the contract: %s != %s", by, got, before)
		}
		if got := r.Hygiene(); !slices.Equal(got, violations) {
			t.Fatalf("written_by %q changed the hygiene: %v != %v", by, got, violations)
		}
	}
}
