package expand

import (
	"slices"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

func TestQuestions(t *testing.T) {
	answer := "Here are some questions:\n" +
		"1. when is high tide\n" +
		"2) is it safe to swim now\n" +
		"- \"when is high tide\"\n" +
		"* “how deep is the harbour”\n" +
		"\n   \t\n" +
		"bell\x07 rings \u200bat noon\n" +
		strings.Repeat("word ", 70) + "\n" +
		strings.Repeat("x", 201) + "\n" +
		"10. the tenth\n" +
		"one more\n"
	got := Questions(answer, 6)
	want := []string{"when is high tide", "is it safe to swim now", "how deep is the harbour", "bell rings at noon", "the tenth", "one more"}
	if !slices.Equal(got, want) {
		t.Fatalf("Questions:\n got %q\nwant %q", got, want)
	}
	if got := Questions("", 5); len(got) != 0 {
		t.Fatalf("an empty answer: %q", got)
	}
}

func TestBody(t *testing.T) {
	r := rowcall.Row{Key: "TIDES", Category: "sea", Content: "# WHAT: Tide   times\n# WHEN_TO_USE: going\nsailing\n# ARGS: $1=harbour\nbody text"}
	want := "Capability: TIDES\nWhat it does: Tide times\nWhen to use it: going\nArguments: $1=harbour\nCategory: sea\n"
	if got := Body(&r); got != want {
		t.Fatalf("Body:\n%q\nwant\n%q", got, want)
	}
}
