package fn

import (
	"slices"
	"testing"
)

// FuzzPlainArgv checks Argv's fast path against encoding/json's reading of
// the same rendered template: whatever plainArgv accepts, jsonArgv reads the
// same way and accepts too.
func FuzzPlainArgv(f *testing.F) {
	for _, s := range []string{`["hello"]`, `[]`, ` [ "a" , "b" ] `, `["a",]`, `["a" "b"]`, `["a\"b"]`, `["a\u0000"]`,
		`["é"]`, "[\"\xff\"]", `[1,"a"]`, `["a"]]`, `[["a"]]`, `[,]`, `["a\tb"]`, "[\"a\tb\"]", `["]"]`, "\u00a0[\"a\"]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fast, ok := plainArgv("m", text)
		if !ok {
			return
		}
		slow, fail := jsonArgv("m", text)
		if fail != nil || !slices.Equal(fast, slow) {
			t.Fatalf("%q: plainArgv %q, encoding/json %q %v", text, fast, slow, fail)
		}
	})
}
