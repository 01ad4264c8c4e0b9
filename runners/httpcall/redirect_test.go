package httpcall

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/outbound"
)

// A redirect to another origin carries none of the row's credentials: not a
// headers: value, not a bearer or basic Authorization (net/http keeps those
// for another port of the same host), not a query credential through Referer,
// and not an oauth client secret in a 307 re-post of the token request. The
// same origin keeps them.
func TestRedirectDropsCredentials(t *testing.T) {
	const secret = "sk-redirect-41f09c"
	env := env{"K": secret, "CID": "client-7", "CSECRET": secret}
	other := newUpstream(t, nil)                      // 127.0.0.1, another port
	elsewhere := newUpstreamOn(t, "127.0.0.2:0", nil) // another loopback address
	var first *upstream
	first = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		to := map[string]*upstream{"port": other, "host": elsewhere, "same": first}[strings.Split(r.URL.Path, "/")[1]]
		if to == nil || strings.HasPrefix(r.URL.Path, "/same/landed") {
			w.Write([]byte("ok"))
			return
		}
		http.Redirect(w, r, to.URL+"/"+strings.Split(r.URL.Path, "/")[1]+"/landed", http.StatusTemporaryRedirect)
	})
	allow, err := outbound.Parse("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	r := New(Config{Client: allow.Client(0), Timeout: 5 * time.Second})
	auths := map[string]string{
		"headers":     `headers:{"X-Api-Key":"$K"}`,
		"bearer":      "bearer:K",
		"basic":       "basic:K",
		"query":       "query:api_key=K",
		"oauth body":  "OAUTH body",
		"oauth basic": "OAUTH basic",
	}
	for name, auth := range auths {
		for _, dest := range []string{"port", "host"} {
			t.Run(name+" to another "+dest, func(t *testing.T) {
				to := map[string]*upstream{"port": other, "host": elsewhere}[dest]
				target, auth := "POST "+first.URL+"/"+dest+"/start?q=1", auth
				if style, ok := strings.CutPrefix(auth, "OAUTH "); ok {
					target, auth = "GET "+elsewhere.URL+"/api", oauthAuth(first.URL+"/"+dest, style)
				}
				before := to.hits.Load()
				invoke(r, httpRow("ROW", target, auth, `{"a":1}`), "", env, false)
				if to.hits.Load() != before+1 {
					t.Fatalf("the redirect was not followed (%d hits)", to.hits.Load()-before)
				}
				got := to.seen()
				for k, v := range got.Header {
					if k == "Authorization" || k == "X-Api-Key" || k == "Referer" || strings.Contains(strings.Join(v, " "), secret) {
						t.Errorf("%s received %s: %q", to.URL, k, v)
					}
				}
				if strings.Contains(got.Path+got.RawQuery+got.Body, secret) || got.Body != "" {
					t.Errorf("%s received %s %s?%s with body %q", to.URL, got.Method, got.Path, got.RawQuery, got.Body)
				}
			})
		}
	}
	t.Run("same origin keeps them", func(t *testing.T) {
		out := invoke(r, httpRow("ROW", "POST "+first.URL+"/same/start", "bearer:K", `{"a":1}`), "", env, false)
		got := first.seen()
		if out.Result != "HTTP 200:ok" || got.Path != "/same/landed" || got.Header.Get("Authorization") != "Bearer "+secret || got.Body != `{"a":1}` {
			t.Fatalf("%s: %s %s with %v and body %q", out.Result, got.Method, got.Path, got.Header, got.Body)
		}
	})
}
