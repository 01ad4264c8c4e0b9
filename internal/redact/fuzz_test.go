package redact_test

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/test/leak"
)

// basic is the oauth client's Basic credential: base64(id:QueryEscape(secret)).
func basic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// FuzzString proves that no fragment of a secret of 8 or more bytes (the whole
// secret when it is shorter) survives String, Redact or Clip at any cut
// length, for every leak.Encodings spelling of the secret embedded in other
// text and for the oauth client's Basic credential, looking at the output
// plainly and through every decoding a client could apply (leak.Views: JSON
// unescaping, percent-decoding with and without '+' as space, base64 of any
// run at any offset, and base64 inside those). "Survives" means readable from
// the output but not from the same text with the secret replaced by bytes
// foreign to it (the surrounding text may hold fragments by itself).
func FuzzString(f *testing.F) {
	f.Add("sk-abc123", "Bearer ", " tail", uint64(1))
	f.Add("p@ss w/rd+=", "user:", ":", uint64(2))
	f.Add("sk-live-abc/def+ghi!'()*~", `{"echo":"`, `"}`, uint64(3))
	f.Add("DACT", "[RE", "ED]", uint64(4))
	f.Add("]x[R", "]x[R", "x]x[R", uint64(5))
	f.Add("aaaa", "aaa", "aaaaa", uint64(6))
	f.Add("%25%\\\\\\u00", "%", "\\", uint64(7))
	f.Add("ключ-секрет-😀-значение", "key=", "&x=1", uint64(8))
	f.Add("0123456789abcdefghijklmnopqrstuvwxyzABCDEF", "error: invalid key ", ".", uint64(9))
	f.Fuzz(property)
}

// property is FuzzString's check for one input; seed drives the random
// subsets and hex cases.
func property(t *testing.T, secret, prefix, suffix string, seed uint64) {
	{
		if len(secret) < redact.MinSecretLen || len(secret) > 40 || len(prefix)+len(suffix) > 40 || !utf8.ValidString(secret) {
			return
		}
		filler := leak.Foreign(secret)
		if filler == "" {
			return
		}
		secrets := []string{secret}
		check := func(name, in, ctxText string) {
			ctx := leak.Views(ctxText)
			if frag := leak.Fragment(secret, leak.Views(redact.String(in, secrets)), ctx); frag != "" {
				t.Fatalf("%s: fragment %q of secret %q survives redact.String(%q) = %q", name, frag, secret, in, redact.String(in, secrets))
			}
			for n := 0; n <= len(in)+1; n++ {
				out := redact.Clip(in, n, secrets)
				if len(out) > n+len("…") && n < len(redact.String(in, secrets)) {
					t.Fatalf("%s: redact.Clip(%q, %d) = %q is longer than the cut", name, in, n, out)
				}
				if frag := leak.Fragment(secret, leak.Views(out), ctx); frag != "" {
					t.Fatalf("%s: fragment %q of secret %q survives redact.Clip(%q, %d) = %q", name, frag, secret, in, n, out)
				}
			}
			// The same through Redact, nested and as a map key.
			v := redact.Redact(map[string]any{"k": []any{in}, in: "x"}, secrets).(map[string]any)
			for k := range v {
				if frag := leak.Fragment(secret, leak.Views(k), ctx); frag != "" {
					t.Fatalf("%s: fragment %q survives in key %q", name, frag, k)
				}
			}
			if s := v["k"].([]any)[0].(string); leak.Fragment(secret, leak.Views(s), ctx) != "" {
				t.Fatalf("%s: secret %q survives nested: %q", name, secret, s)
			}
		}
		for _, e := range leak.Encodings {
			r := rand.New(rand.NewPCG(seed, 7))
			rc := rand.New(rand.NewPCG(seed, 7))
			if e.Whole {
				check(e.Name, e.Enc(prefix+secret+suffix, r), e.Enc(prefix+filler+suffix, rc))
			} else {
				check(e.Name, prefix+e.Enc(secret, r)+suffix, prefix+e.Enc(filler, rc)+suffix)
			}
		}
		check("basic", basic(prefix, secret), basic(prefix, filler))
	}
}

// TestClipEveryEncoding runs the fuzz property over fixed secrets and texts
// with many random subsets, so plain `go test` covers more than the seeds.
func TestClipEveryEncoding(t *testing.T) {
	secrets := []string{"sk-live-0123456789abcdef", "p@ss w/rd+=!'()*~x", "tok\"with\\quote/slash", "ключ-секрет-😀"}
	for i, sec := range secrets {
		for seed := range uint64(20) {
			t.Run(fmt.Sprint(i, "/", seed), func(t *testing.T) {
				property(t, sec, "answer: ", ` and more`, seed)
			})
		}
	}
}
