package signin

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/rowcall/rowcall"
)

// issuerServer is an OpenID provider on loopback whose ID tokens a test
// shapes: discovery, the authorization endpoint (it answers at once, as if
// the person had signed in), the token endpoint (it checks the client
// secret and the PKCE verifier, then issues the ID token mint makes) and
// the JWKS with its one key. go-oidc verifies what it issues for real.
type issuerServer struct {
	*httptest.Server
	key *rsa.PrivateKey

	mu        sync.Mutex
	challenge string // the code challenge of the last authorization
	redeemed  map[string]bool
	// mint makes the ID token's claims from the defaults (iss, sub, aud,
	// exp, iat, nonce, email, name, groups); sign, when set, signs them
	// instead of the JWKS's key.
	mint     func(claims jwt.MapClaims)
	sign     *rsa.PrivateKey
	callback func(q url.Values) // adjusts the authorization response
	noIss    bool               // the metadata does not promise iss in authorization responses
}

const testSecret = "s3cret"

func newIssuer(t *testing.T) *issuerServer {
	t.Helper()
	s := &issuerServer{key: keys()[0], redeemed: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": s.URL, "authorization_endpoint": s.URL + "/auth", "token_endpoint": s.URL + "/token",
			"jwks_uri": s.URL + "/jwks", "id_token_signing_alg_values_supported": []string{"RS256"},
			"authorization_response_iss_parameter_supported": !s.noIss})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		pub := s.key.PublicKey
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]any{{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
			"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}}})
	})
	var nonce string
	mux.HandleFunc("GET /auth", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != "rowcall" || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
			!slices.Equal(strings.Fields(q.Get("scope")), []string{"openid", "email", "profile", "groups"}) {
			http.Error(w, "unexpected authorization request "+r.URL.RawQuery, 400)
			return
		}
		s.mu.Lock()
		s.challenge, nonce = q.Get("code_challenge"), q.Get("nonce")
		s.mu.Unlock()
		back := url.Values{"code": {"code-1"}, "state": {q.Get("state")}, "iss": {s.URL}}
		if s.callback != nil {
			s.callback(back)
		}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+back.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		r.ParseForm()
		s.mu.Lock()
		defer s.mu.Unlock()
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		code := r.Form.Get("code")
		if id != "rowcall" || secret != testSecret || s.redeemed[code] || base64.RawURLEncoding.EncodeToString(sum[:]) != s.challenge {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		s.redeemed[code] = true
		now := time.Now()
		claims := jwt.MapClaims{"iss": s.URL, "sub": "alice", "aud": "rowcall", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(),
			"nonce": nonce, "email": "alice@example.test", "name": "Alice", "preferred_username": "alice", "groups": []string{"tools-admins", "staff"}}
		if s.mint != nil {
			s.mint(claims)
		}
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
		tok.Header["kid"] = "k1"
		signer := s.key
		if s.sign != nil {
			signer = s.sign
		}
		raw, err := tok.SignedString(signer)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600, "id_token": raw})
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// keys are two RSA keys: the provider's, and another.
var keys = sync.OnceValue(func() [2]*rsa.PrivateKey {
	var k [2]*rsa.PrivateKey
	for i := range k {
		var err error
		if k[i], err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	}
	return k
})

const callback = "http://127.0.0.1:1/login/callback"

// signInAt runs one sign-in against s as the API does: Begin, the browser's
// trip to the authorization endpoint, Finish with the callback's query.
func signInAt(t *testing.T, s *issuerServer, p *Provider) (rowcall.Claims, error) {
	t.Helper()
	l, q := authorize(t, p)
	return p.Finish(context.Background(), callback, l, q)
}

// authorize begins a sign-in and follows it to the authorization endpoint:
// the Login to keep, and the query the callback is sent.
func authorize(t *testing.T, p *Provider) (rowcall.Login, url.Values) {
	t.Helper()
	authURL, l, err := p.Begin(context.Background(), callback)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound || !strings.HasPrefix(back.String(), callback+"?") {
		t.Fatalf("the authorization endpoint answered %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if back.Query().Get("state") != l.State {
		t.Fatalf("state %q came back for %q", back.Query().Get("state"), l.State)
	}
	return l, back.Query()
}

func provider(t *testing.T, s *issuerServer) *Provider {
	t.Helper()
	roles, err := rowcall.ParseRoleMapping("tools-admins=admin,tools-editors=editor")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Issuer: s.URL, ClientID: "rowcall", ClientSecret: testSecret, Scopes: SplitScopes("groups"), Roles: roles})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The ID token is go-oidc's to verify, against the provider's JWKS: a
// token signed by another key, expired, for another audience or from
// another issuer (with the same subject) is refused, and so is one whose
// nonce is not the sign-in's; the callback's iss must be the issuer's and
// must be there when the provider promises it (RFC 9207). Each is
// signin_failed with its reason; a good token gives the person's claims and
// the role their groups map to.
func TestFinish(t *testing.T) {
	for _, c := range []struct {
		name     string
		set      func(s *issuerServer)
		reason   string
		contains string
	}{
		{"good", func(*issuerServer) {}, "", ""},
		{"forged", func(s *issuerServer) { s.sign = keys()[1] }, "id_token", "signature"},
		{"expired", func(s *issuerServer) {
			s.mint = func(c jwt.MapClaims) {
				c["exp"], c["iat"] = time.Now().Add(-10*time.Minute).Unix(), time.Now().Add(-70*time.Minute).Unix()
			}
		}, "id_token", "expired"},
		{"wrong audience", func(s *issuerServer) { s.mint = func(c jwt.MapClaims) { c["aud"] = "another-client" } }, "id_token", "audience"},
		{"another issuer, same subject", func(s *issuerServer) {
			s.mint = func(c jwt.MapClaims) { c["iss"] = "http://127.0.0.1:1/another-issuer" }
		}, "id_token", "issuer"},
		{"wrong nonce", func(s *issuerServer) { s.mint = func(c jwt.MapClaims) { c["nonce"] = "another-sign-ins-nonce" } }, "nonce", "nonce"},
		{"no nonce", func(s *issuerServer) { s.mint = func(c jwt.MapClaims) { delete(c, "nonce") } }, "nonce", "nonce"},
		{"callback from another issuer", func(s *issuerServer) {
			s.callback = func(q url.Values) { q.Set("iss", "http://127.0.0.1:1/another-issuer") }
		}, "issuer", "RFC 9207"},
		{"callback's iss with a trailing slash", func(s *issuerServer) { s.callback = func(q url.Values) { q.Set("iss", q.Get("iss")+"/") } }, "issuer", "RFC 9207"},
		{"callback without the promised iss", func(s *issuerServer) { s.callback = func(q url.Values) { q.Del("iss") } }, "issuer", "names no issuer"},
		{"callback without iss, none promised", func(s *issuerServer) { s.noIss = true; s.callback = func(q url.Values) { q.Del("iss") } }, "", ""},
		{"no code", func(s *issuerServer) { s.callback = func(q url.Values) { q.Del("code") } }, "code", "no code"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newIssuer(t)
			c.set(s)
			p := provider(t, s)
			claims, err := signInAt(t, s, p)
			if c.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := rowcall.Claims{Issuer: s.URL, Subject: "alice", Email: "alice@example.test", Name: "Alice", UserName: "alice", Groups: []string{"tools-admins", "staff"}}
				if claims.Issuer != want.Issuer || claims.Subject != want.Subject || claims.Email != want.Email || claims.Name != want.Name ||
					claims.UserName != want.UserName || !slices.Equal(claims.Groups, want.Groups) {
					t.Fatalf("claims %+v, want %+v", claims, want)
				}
				if r := p.Role(claims.Groups); r != rowcall.RoleAdmin {
					t.Fatalf("role %q for %v", r, claims.Groups)
				}
				return
			}
			var e *rowcall.Error
			if !errors.As(err, &e) || e.Reason() != "signin_failed:"+c.reason || e.HowToFix == "" || !strings.Contains(e.Message, c.contains) {
				t.Fatalf("got %v (%#v), want signin_failed:%s mentioning %q", err, e, c.reason, c.contains)
			}
		})
	}
}

// A code is redeemed once: the same callback finished twice fails the
// second time, at the provider (signin_failed:code).
func TestFinishCodeOnce(t *testing.T) {
	s := newIssuer(t)
	p := provider(t, s)
	l, q := authorize(t, p)
	if _, err := p.Finish(context.Background(), callback, l, q); err != nil {
		t.Fatal(err)
	}
	var e *rowcall.Error
	if _, err := p.Finish(context.Background(), callback, l, q); !errors.As(err, &e) || e.Reason() != "signin_failed:code" {
		t.Fatalf("the same code again: %v", err)
	}
}

// Discovery is lazy and kept only once it succeeds: a provider that is down
// at the first sign-in (signin_failed:provider, a 502) is discovered at the
// next.
func TestDiscoveryRetried(t *testing.T) {
	s := newIssuer(t)
	up := s.Config.Handler
	down := true
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		up.ServeHTTP(w, r)
	})
	p := provider(t, s)
	var e *rowcall.Error
	if _, _, err := p.Begin(context.Background(), "http://127.0.0.1:1/login/callback"); !errors.As(err, &e) || e.Reason() != "signin_failed:provider" || e.Status != http.StatusBadGateway {
		t.Fatalf("with the provider down: %v", err)
	}
	down = false
	if _, err := signInAt(t, s, p); err != nil {
		t.Fatal(err)
	}
}

// The settings a provider needs are checked when it is made.
func TestNew(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Issuer: "login.example.com", ClientID: "x"}, "ROWCALL_OIDC_ISSUER"},
		{Config{Issuer: "https://login.example.com"}, "ROWCALL_OIDC_CLIENT_ID"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	p, err := New(Config{Issuer: "https://login.example.com/realms/acme", ClientID: "x"})
	if err != nil || p.Name() != "login.example.com" || p.cfg.GroupsClaim != DefaultGroupsClaim {
		t.Fatalf("defaults: %v %+v", err, p)
	}
}

// A groups claim is a list of strings, or one string; anything else is no
// groups.
func TestGroups(t *testing.T) {
	for _, c := range []struct {
		in   any
		want []string
	}{
		{[]any{"a", "b", 3, ""}, []string{"a", "b"}},
		{"solo", []string{"solo"}},
		{"", nil},
		{map[string]any{"a": 1}, nil},
		{nil, nil},
	} {
		if got := groups(c.in); !slices.Equal(got, c.want) {
			t.Errorf("groups(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if got := SplitScopes("groups, offline_access  roles"); !slices.Equal(got, []string{"groups", "offline_access", "roles"}) {
		t.Errorf("SplitScopes: %v", got)
	}
}
