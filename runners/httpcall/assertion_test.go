package httpcall

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// keyTokenServer is a loopback token endpoint for client "client-pk" that
// authenticates it by a client assertion (RFC 7523 §2.2) verified with pub,
// as an authorization server does. It keeps the assertions' claims, and
// refuses with the assertion echoed back when refuse is set.
type keyTokenServer struct {
	*upstream
	pub    crypto.PublicKey
	refuse bool
	mu     sync.Mutex
	claims []jwt.MapClaims
	kids   []any
}

func newKeyTokenServer(t *testing.T, pub crypto.PublicKey, alg string) *keyTokenServer {
	ts := &keyTokenServer{pub: pub}
	ts.upstream = newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		form, _ := url.ParseQuery(ts.seen().Body)
		a := form.Get("client_assertion")
		if ts.refuse {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client","error_description":"assertion `+a+` not accepted"}`)
			return
		}
		tok, err := jwt.Parse(a, func(*jwt.Token) (any, error) { return ts.pub, nil },
			jwt.WithValidMethods([]string{alg}), jwt.WithAudience(ts.URL+"/token"), jwt.WithIssuer("client-pk"),
			jwt.WithSubject("client-pk"), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
		_, _, basic := r.BasicAuth()
		switch {
		case form.Get("grant_type") != "client_credentials" || form.Get("client_assertion_type") != ClientAssertionType ||
			form.Get("client_id") != "client-pk" || form.Has("client_secret") || basic:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_request"}`)
		case err != nil:
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client"}`)
		default:
			ts.mu.Lock()
			ts.claims = append(ts.claims, tok.Claims.(jwt.MapClaims))
			ts.kids = append(ts.kids, tok.Header["kid"])
			n := len(ts.claims)
			ts.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-pk-" + string(rune('0'+n)), "token_type": "Bearer", "expires_in": 3600})
		}
	})
	return ts
}

// pemOf is key as PEM: PKCS#8, or SEC 1 / PKCS#1 when legacy.
func pemOf(t *testing.T, key crypto.Signer, legacy bool) string {
	var block *pem.Block
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if legacy {
			der, err := x509.MarshalECPrivateKey(k)
			if err != nil {
				t.Fatal(err)
			}
			block = &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
		}
	case *rsa.PrivateKey:
		if legacy {
			block = &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}
		}
	}
	if block == nil {
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		block = &pem.Block{Type: "PRIVATE KEY", Bytes: der}
	}
	return string(pem.EncodeToMemory(block))
}

func keyAuth(tokenURL, extra string) string {
	return `oauth:{"token_url":"` + tokenURL + `/token","client_id":"$CID","private_key":"$PK"` + extra + `}`
}

// TestOAuthPrivateKey: a client with a private key gets its token with a
// signed assertion the server verifies (iss and sub the client, aud the
// token endpoint, a fresh jti, a minute's life, kid as written), in every
// key format and the algorithm the key or the column names; the upstream
// then gets the token.
func TestOAuthPrivateKey(t *testing.T) {
	ec256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	tests := []struct {
		name   string
		key    crypto.Signer
		legacy bool
		extra  string
		alg    string
	}{
		{"EC P-256 PKCS#8, alg from the key", ec256, false, `,"kid":"k-1"`, "ES256"},
		{"EC P-384 SEC 1, alg named", ec384, true, `,"alg":"ES384"`, "ES384"},
		{"RSA PKCS#1, RS256 from the key", rsaKey, true, "", "RS256"},
		{"RSA PKCS#8, PS256 named", rsaKey, false, `,"alg":"PS256","kid":"$KID"`, "PS256"},
		{"Ed25519", edKey, false, "", "EdDSA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newKeyTokenServer(t, tt.key.Public(), tt.alg)
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Header.Get("Authorization")) })
			key := pemOf(t, tt.key, tt.legacy)
			e := env{"CID": "client-pk", "PK": key, "KID": "k-2"}
			for i := range 2 { // a second runner fetches its own token
				out := invoke(New(Config{}), httpRow("ROW", "GET "+up.URL, keyAuth(ts.URL, tt.extra), ""), "", e, false)
				if out.Result != "HTTP 200:Bearer [REDACTED]" || up.seen().Header.Get("Authorization") != "Bearer tok-pk-"+string(rune('1'+i)) {
					t.Fatalf("call %d: %q, upstream got %q", i, out.Result, up.seen().Header.Get("Authorization"))
				}
				if !strings.Contains(strings.Join(out.Secrets, "\n"), key) {
					t.Fatal("the key is not among the values redacted")
				}
			}
			c := ts.claims
			if c[0]["jti"] == "" || c[0]["jti"] == c[1]["jti"] {
				t.Fatalf("jti %v then %v: want a fresh one each time", c[0]["jti"], c[1]["jti"])
			}
			if life := c[0]["exp"].(float64) - c[0]["iat"].(float64); life <= 0 || life > 60 {
				t.Fatalf("assertion lives %vs", life)
			}
			wantKid := map[string]any{`,"kid":"k-1"`: "k-1", `,"alg":"PS256","kid":"$KID"`: "k-2"}[tt.extra]
			if ts.kids[0] != wantKid {
				t.Fatalf("kid %v, want %v", ts.kids[0], wantKid)
			}
		})
	}
	t.Run("one-line PEM with \\n, assertion_audience", func(t *testing.T) {
		ts := newKeyTokenServer(t, ec256.Public(), "ES256")
		e := env{"CID": "client-pk", "PK": strings.ReplaceAll(pemOf(t, ec256, false), "\n", `\n`)}
		out := invoke(New(Config{}), httpRow("ROW", "GET "+newUpstream(t, nil).URL, keyAuth(ts.URL, `,"assertion_audience":"`+ts.URL+`/token"`), ""), "", e, false)
		if out.Result != "HTTP 200:ok" {
			t.Fatalf("got %q", out.Result)
		}
	})
}

// TestOAuthPrivateKeyFailures: a key that cannot sign fails before any
// token request, naming the variable and never quoting the key; a token
// endpoint that echoes the assertion in its refusal gets none of it back.
func TestOAuthPrivateKeyFailures(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key := pemOf(t, ec, false)
	certLike := "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"
	ts := newKeyTokenServer(t, ec.Public(), "ES256")
	up := newUpstream(t, nil)
	tests := []struct {
		name, pk, extra, want string
	}{
		{"not PEM", "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg", "",
			"ERR:http:ROW:ERR:auth:private_key:the private key in $PK is not PEM (want -----BEGIN PRIVATE KEY-----)"},
		{"a certificate", certLike, "",
			"ERR:http:ROW:ERR:auth:private_key:the private key in $PK is a PEM CERTIFICATE, not a private key (want PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)"},
		{"broken body", "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49\n-----END PRIVATE KEY-----\n", "",
			"ERR:http:ROW:ERR:auth:private_key:the private key in $PK does not parse as a PRIVATE KEY"},
		{"alg not fitting the key", key, `,"alg":"RS256"`,
			"ERR:http:ROW:ERR:auth:private_key:alg RS256 does not fit the private key in $PK (an EC P-256 key)"},
		{"EC curve not fitting the alg", key, `,"alg":"ES384"`,
			"ERR:http:ROW:ERR:auth:private_key:alg ES384 does not fit the private key in $PK (an EC P-256 key)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := ts.hits.Load()
			out := invoke(New(Config{}), httpRow("ROW", "GET "+up.URL, keyAuth(ts.URL, tt.extra), ""), "", env{"CID": "client-pk", "PK": tt.pk}, false)
			if !strings.HasPrefix(out.Result, tt.want+" — ") || ts.hits.Load() != hits || up.hits.Load() != 0 {
				t.Fatalf("got %q (token endpoint hit %d times, upstream %d)\nwant %q — …", out.Result, ts.hits.Load()-hits, up.hits.Load(), tt.want)
			}
		})
	}
	t.Run("an answer holding the key", func(t *testing.T) {
		quoted, _ := json.Marshal(key)
		echo := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, key+" "+string(quoted)) })
		out := invoke(New(Config{}), httpRow("ROW", "GET "+echo.URL, keyAuth(ts.URL, ""), ""), "", env{"CID": "client-pk", "PK": key}, false)
		if out.Result != `HTTP 200:[REDACTED] "[REDACTED]"` {
			t.Fatalf("got %q", out.Result)
		}
	})
	t.Run("refusal echoing the assertion", func(t *testing.T) {
		ts.refuse = true
		out := invoke(New(Config{}), httpRow("ROW", "GET "+up.URL, keyAuth(ts.URL, ""), ""), "", env{"CID": "client-pk", "PK": key}, false)
		form, _ := url.ParseQuery(ts.seen().Body)
		a := form.Get("client_assertion")
		if a == "" || !strings.HasPrefix(out.Result, "ERR:http:ROW:ERR:auth:oauth_token:token endpoint answered 401: ") {
			t.Fatalf("got %q", out.Result)
		}
		for i := 0; i+8 <= len(a); i += 4 {
			if strings.Contains(out.Result, a[i:i+8]) {
				t.Fatalf("fragment %q of the assertion in %q", a[i:i+8], out.Result)
			}
		}
	})
}
