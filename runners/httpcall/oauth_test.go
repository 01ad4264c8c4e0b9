package httpcall

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rowcall/rowcall/internal/outbound"
)

// tokenServer is a loopback OAuth token endpoint for client "client-7" with
// secret "cs-very-secret". Each token it issues is "tok-<n>".
type tokenServer struct {
	*upstream
	issued    atomic.Int64
	expiresIn any
	status    int
}

func newTokenServer(t *testing.T) *tokenServer {
	ts := &tokenServer{expiresIn: 3600, status: 200}
	ts.upstream = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		id, secret, basic := r.BasicAuth()
		form, _ := url.ParseQuery(ts.seen().Body)
		if !basic {
			id, secret = form.Get("client_id"), form.Get("client_secret")
		}
		switch {
		case r.Method != http.MethodPost || form.Get("grant_type") != "client_credentials":
			w.WriteHeader(400)
			io.WriteString(w, `{"error":"unsupported_grant_type"}`)
		case ts.status != 200:
			w.WriteHeader(ts.status)
			io.WriteString(w, `{"error":"invalid_client","detail":"client_secret cs-very-secret rejected"}`)
		case id != "client-7" || secret != "cs-very-secret":
			w.WriteHeader(401)
			io.WriteString(w, `{"error":"invalid_client"}`)
		default:
			n := ts.issued.Add(1)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"access_token": "tok-" + string(rune('0'+n)), "token_type": "Bearer",
				"expires_in": ts.expiresIn, "scope": form.Get("scope"),
			})
		}
	})
	return ts
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func oauthAuth(tokenURL, style string) string {
	s := `oauth:{"token_url":"` + tokenURL + `/oauth/token","client_id":"$CID","client_secret":"$CSECRET","scope":"read write"`
	if style != "" {
		s += `,"auth_style":"` + style + `"`
	}
	return s + "}"
}

var oauthEnv = env{"CID": "client-7", "CSECRET": "cs-very-secret"}

func TestOAuthClientCredentials(t *testing.T) {
	for _, style := range []string{"", "basic", "body"} {
		t.Run("style="+style, func(t *testing.T) {
			ts := newTokenServer(t)
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer tok-1" {
					w.WriteHeader(401)
				}
				io.WriteString(w, "hello")
			})
			r := New(Config{})
			row := httpRow("ROW", "GET "+up.URL+"/me", oauthAuth(ts.URL, style), "")
			for i := 0; i < 2; i++ {
				out := invoke(r, row, "", oauthEnv, false)
				if out.Result != "HTTP 200:hello" {
					t.Fatalf("call %d: %q", i, out.Result)
				}
				if !strings.Contains(strings.Join(out.Secrets, " "), "tok-1") || !strings.Contains(strings.Join(out.Secrets, " "), "cs-very-secret") {
					t.Fatalf("Secrets = %q", out.Secrets)
				}
			}
			if n := ts.hits.Load(); n != 1 {
				t.Fatalf("token endpoint hit %d times for two calls, want 1", n)
			}
			if form, _ := url.ParseQuery(ts.seen().Body); form.Get("scope") != "read write" {
				t.Fatalf("token request form %q", ts.seen().Body)
			}
		})
	}
}

func TestOAuthCacheLifetime(t *testing.T) {
	ts := newTokenServer(t)
	var unauthorized atomic.Bool
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if unauthorized.Load() {
			w.WriteHeader(401)
		}
		io.WriteString(w, r.Header.Get("Authorization"))
	})
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	r := New(Config{Now: clk.now})
	row := httpRow("ROW", "GET "+up.URL, oauthAuth(ts.URL, ""), "")
	steps := []struct {
		name    string
		advance time.Duration
		reject  bool
		want    string
		issued  int64
	}{
		{"first call fetches", 0, false, "HTTP 200:Bearer [REDACTED]", 1},
		{"within lifetime: cached", 58 * time.Minute, false, "HTTP 200:Bearer [REDACTED]", 1},
		{"inside the one-minute margin: refetched", time.Minute + time.Second, false, "HTTP 200:Bearer [REDACTED]", 2},
		{"upstream 401 drops the token", 0, true, "ERR:http:401:Bearer [REDACTED]", 2},
		{"next call refetches", 0, false, "HTTP 200:Bearer [REDACTED]", 3},
	}
	for _, s := range steps {
		clk.add(s.advance)
		unauthorized.Store(s.reject)
		out := invoke(r, row, "", oauthEnv, false)
		if out.Result != s.want || ts.issued.Load() != s.issued {
			t.Fatalf("%s: %q, issued %d; want %q, %d", s.name, out.Result, ts.issued.Load(), s.want, s.issued)
		}
	}
}

func TestOAuthFailures(t *testing.T) {
	ts := newTokenServer(t)
	ts.status = 401
	up := newUpstream(t, nil)
	tests := []struct {
		name   string
		r      *Runner
		env    env
		want   string
		status int
		upHits int64
	}{
		{"token endpoint refuses", New(Config{}), oauthEnv,
			`ERR:http:ROW:ERR:auth:oauth_token:token endpoint answered 401: {"error":"invalid_client","detail":"client_secret [REDACTED] rejected"}`, 401, 0},
		{"missing variable: no credential, no token request", New(Config{}), env{"CID": "client-7"}, "HTTP 200:ok", 200, 1},
		{"token endpoint behind the outbound policy", New(Config{Client: outbound.Policy{}.Client(0)}), oauthEnv,
			"ERR:http:ROW:ERR:auth:oauth_token:outbound: " + ts.Listener.Addr().String() +
				" is a loopback address; rowcall refuses loopback, private, link-local and metadata addresses unless the operator allows them (--allow-outbound 127.0.0.1/32)", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, tokBefore := up.hits.Load(), ts.hits.Load()
			out := invoke(tt.r, httpRow("ROW", "GET "+up.URL, oauthAuth(ts.URL, ""), ""), "", tt.env, false)
			if out.Result != tt.want || out.Status != tt.status {
				t.Fatalf("got %q status %d\nwant %q status %d", out.Result, out.Status, tt.want, tt.status)
			}
			if n := up.hits.Load() - before; n != tt.upHits {
				t.Fatalf("upstream hit %d times, want %d", n, tt.upHits)
			}
			if tt.env["CSECRET"] == "" && ts.hits.Load() != tokBefore {
				t.Fatal("token endpoint called without a client secret")
			}
			if up.hits.Load() > before && up.seen().Header.Get("Authorization") != "" {
				t.Fatal("Authorization sent without a token")
			}
		})
	}
}

func TestTokenLifetime(t *testing.T) {
	tests := []struct {
		given, want time.Duration
	}{
		{time.Hour, time.Hour}, {2 * time.Minute, 2 * time.Minute}, {0, defaultTokenLife}, {-5 * time.Second, defaultTokenLife},
		{1e6 * time.Hour, maxTokenLife},
	}
	for _, tt := range tests {
		if got := lifetime(tt.given); got != tt.want {
			t.Errorf("lifetime(%v) = %v, want %v", tt.given, got, tt.want)
		}
	}
}

func TestOAuthConcurrentCallsShareOneToken(t *testing.T) {
	ts := newTokenServer(t)
	up := newUpstream(t, nil)
	r := New(Config{})
	row := httpRow("ROW", "GET "+up.URL, oauthAuth(ts.URL, ""), "")
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out := invoke(r, row, "", oauthEnv, false); out.Result != "HTTP 200:ok" {
				t.Errorf("Result = %q", out.Result)
			}
		}()
	}
	wg.Wait()
	if n := ts.issued.Load(); n != 1 {
		t.Fatalf("%d tokens issued for 16 concurrent calls, want 1", n)
	}
}

// What a token endpoint answers becomes the same results whatever makes the
// request: an answer without a token, one over the size cap, a refusal (its
// body clipped and redacted), and expires_in as a numeric string.
func TestOAuthTokenAnswers(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	for _, tt := range []struct {
		name, ctype, body string
		status            int
		want              string
		wantStatus        int
	}{
		{"no access_token", "application/json", `{"token_type":"bearer"}`, 200,
			"ERR:http:ROW:ERR:auth:oauth_token:token endpoint answered 200 without an access_token", 200},
		{"not JSON", "application/json", `<html>`, 200,
			"ERR:http:ROW:ERR:auth:oauth_token:token endpoint answered 200 without an access_token", 200},
		{"over the cap", "application/json", `{"access_token":"` + strings.Repeat("x", 300) + `"}`, 200,
			"ERR:http:ROW:ERR:auth:oauth_token:token endpoint answered 200 with more than 200 bytes", 200},
		{"refused, redacted", "application/json", `{"error":"invalid_scope","echo":"cs-very-secret"}`, 400,
			`ERR:http:ROW:ERR:auth:oauth_token:token endpoint answered 400: {"error":"invalid_scope","echo":"[REDACTED]"}`, 400},
		{"expires_in as a string", "application/json", `{"access_token":"tok-s","expires_in":"120"}`, 200, "HTTP 200:ok", 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			r := New(Config{MaxResponse: 200})
			out := invoke(r, httpRow("ROW", "GET "+up.URL, oauthAuth(ts.URL, ""), ""), "", oauthEnv, false)
			if out.Result != tt.want || out.Status != tt.wantStatus {
				t.Fatalf("got %q status %d\nwant %q status %d", out.Result, out.Status, tt.want, tt.wantStatus)
			}
			if h := ts.seen().Header.Get("Accept"); h != "application/json" {
				t.Fatalf("the token request's Accept is %q", h)
			}
		})
	}
}
