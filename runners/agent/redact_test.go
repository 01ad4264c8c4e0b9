package agent

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/rowcall/rowcall/test/modelserver"
)

// keySpellings are ways a provider's message might carry the key.
var keySpellings = map[string]func(string) string{
	"plain":       func(s string) string { return s },
	"QueryEscape": url.QueryEscape,
	"json \\u002D": func(s string) string {
		return strings.ReplaceAll(s, "-", `\u002D`)
	},
}

// TestRedactionAtEveryCut: whatever point of the provider's text the key
// sits at, and however it is spelled, the cut error message carries no 8
// bytes of it: each cutter redacts first (redact.Clip).
func TestRedactionAtEveryCut(t *testing.T) {
	f := setup(t, func(c *Config) { c.MaxRounds = 1 })
	f.rows.add("T", "tools", nil)
	pad := func(n int) string { return strings.Repeat(".", max(n, 0)) }
	for name, spell := range keySpellings {
		key := spell(testKey)
		for _, back := range []int{len(key) - 1, len(key) / 2, 9, 3} {
			cases := map[string]modelserver.Reply{
				// An error answer's error.message, cut at maxErrorText.
				"error message": {Status: 400, Error: &modelserver.Error{Message: pad(maxErrorText-back) + key + " is not valid", Type: "invalid_request_error"}},
				// An error answer that is not JSON, cut at maxErrorText.
				"error body": {Status: 400, Raw: pad(maxErrorText-back) + key + " upstream"},
				// A 2xx answer that is not a completion, cut at 200.
				"not a completion": {Raw: "<html>" + pad(maxBodyText-len("<html>")-back) + key + "</html>"},
				// A 2xx error object with no choices.
				"no choices": {Raw: `{"error":{"message":"` + pad(maxErrorText-back) + key + `"}}`},
			}
			for what, reply := range cases {
				t.Run(fmt.Sprint(name, "/", what, "/", back), func(t *testing.T) {
					f.ms.Script(reply)
					checkNoKey(t, f.run(agentRow("A", "x", ""), "q").Result, key)
				})
			}
			t.Run(fmt.Sprint(name, "/round limit/", back), func(t *testing.T) {
				f.ms.Script(modelserver.Reply{Content: pad(maxErrorText-back) + key + " [T]1[/T]"})
				out := f.run(agentRow("A", "x", "tools"), "q")
				if !strings.HasPrefix(out.Result, "ERR:agent:round_limit:") {
					t.Fatal(out.Result)
				}
				checkNoKey(t, out.Result, key)
			})
		}
	}
}

func checkNoKey(t *testing.T, result, spelled string) {
	t.Helper()
	if !strings.HasPrefix(result, "ERR:agent:") {
		t.Fatalf("not a failure: %q", result)
	}
	for _, s := range []string{testKey, spelled} {
		for i := 0; i+8 <= len(s); i++ {
			if strings.Contains(result, s[i:i+8]) {
				t.Fatalf("fragment %q of the key in %q", s[i:i+8], result)
			}
		}
	}
}
