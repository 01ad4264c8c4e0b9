package httpcall

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// echoSecret is a credential with characters every encoder treats differently.
const echoSecret = "sk-live/ab+cd!ef'gh(ij)*kl~mn=op"

// echoEncodings spell a value the ways an upstream's echo might.
var echoEncodings = map[string]func(string) string{
	"plain": func(s string) string { return s },
	// JSON with every non-letter \u-escaped in upper-case hex, '/' as \/.
	"json \\u002B": func(s string) string {
		var b strings.Builder
		for _, c := range []byte(s) {
			switch {
			case c == '/':
				b.WriteString(`\/`)
			case 'a' <= c && c <= 'z':
				b.WriteByte(c)
			default:
				fmt.Fprintf(&b, `\u%04X`, c)
			}
		}
		return b.String()
	},
	// encodeURIComponent keeps ! ' ( ) * ~ raw.
	"encodeURIComponent": func(s string) string {
		return strings.NewReplacer("%21", "!", "%27", "'", "%28", "(", "%29", ")", "%2A", "*", "%7E", "~").Replace(url.QueryEscape(s))
	},
	"QueryEscape":          url.QueryEscape,
	"PathEscape lower hex": func(s string) string { return strings.ToLower(url.PathEscape(s)) },
}

// TestEchoedCredentialEncodings: an upstream that echoes the injected
// credential JSON-escaped, percent-encoded in any style or base64'd gets
// none of it back through the runner.
func TestEchoedCredentialEncodings(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		sec := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		name := r.URL.Query().Get("e")
		if name == "base64" {
			io.WriteString(w, "echo: "+base64.StdEncoding.EncodeToString([]byte("Bearer "+sec))+" end")
			return
		}
		io.WriteString(w, "echo: "+echoEncodings[name](sec)+" end")
	})
	for name := range echoEncodings {
		t.Run(name, func(t *testing.T) {
			out := invoke(New(Config{}), httpRow("ROW", "GET "+up.URL+"/?e="+url.QueryEscape(name), "bearer:K", ""), "", env{"K": echoSecret}, false)
			if want := "HTTP 200:echo: [REDACTED] end"; out.Result != want {
				t.Fatalf("got %q, want %q", out.Result, want)
			}
		})
	}
	t.Run("base64", func(t *testing.T) {
		out := invoke(New(Config{}), httpRow("ROW", "GET "+up.URL+"/?e=base64", "bearer:K", ""), "", env{"K": echoSecret}, false)
		// "Bearer " is 7 bytes, so character 9 mixes its last bits with the
		// secret's first and stays; the 39 bytes end on a group boundary.
		enc := base64.StdEncoding.EncodeToString([]byte("Bearer " + echoSecret))
		if want := "HTTP 200:echo: " + enc[:10] + "[REDACTED] end"; out.Result != want {
			t.Fatalf("got %q, want %q", out.Result, want)
		}
	})
}

// TestOAuthErrorRedactedBeforeCut: a token endpoint whose refusal echoes the
// client secret across the 512-byte cut gets no piece of it back: the answer
// is redacted, then cut.
func TestOAuthErrorRedactedBeforeCut(t *testing.T) {
	const secret = "cs-0123456789abcdefghijklmnop" // 29 bytes, as in the issue
	for name, enc := range echoEncodings {
		for _, at := range []int{maxErrorBody - 26, maxErrorBody - 10, maxErrorBody - 3} {
			t.Run(fmt.Sprint(name, "/", at), func(t *testing.T) {
				ts := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(401)
					e := enc(secret)
					io.WriteString(w, strings.Repeat(".", at-len(`{"detail":"`))+`{"detail":"`+e+` rejected"}`)
				})
				env := env{"CID": "client-7", "CSECRET": secret}
				out := invoke(New(Config{}), httpRow("ROW", "GET "+ts.URL, oauthAuth(ts.URL, ""), ""), "", env, false)
				if !strings.HasPrefix(out.Result, "ERR:http:ROW:ERR:auth:oauth_token:token endpoint answered 401: ...") {
					t.Fatalf("got %q", out.Result)
				}
				for _, s := range []string{secret, enc(secret)} {
					for i := 0; i+8 <= len(s); i++ {
						if strings.Contains(out.Result, s[i:i+8]) {
							t.Fatalf("fragment %q of the secret in %q", s[i:i+8], out.Result)
						}
					}
				}
			})
		}
	}
}
