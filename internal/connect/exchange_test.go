package connect

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A subject token is a JWT the keyring's first key signs, naming the holder
// for the provider's token endpoint, good for a minute; the JWKS publishes
// every key, so a provider verifies it, and a token changed by a byte or
// signed by another holder's claims does not verify.
func TestSubjectToken(t *testing.T) {
	k1, k2 := key(), key()
	now := time.Unix(1_800_000_000, 0)
	s := &Service{Keys: must(ParseKeys("k2:" + k2 + ",k1:" + k1)), Now: func() time.Time { return now },
		Base: func(context.Context) string { return "https://rowcall.example" }}
	jwt := s.SubjectToken(context.Background(), "tok_alice", "https://idp.example/token")
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %s", jwt)
	}
	var head map[string]string
	var claims map[string]any
	raw, _ := base64.RawURLEncoding.DecodeString(parts[0])
	json.Unmarshal(raw, &head)
	raw, _ = base64.RawURLEncoding.DecodeString(parts[1])
	json.Unmarshal(raw, &claims)
	if head["alg"] != "EdDSA" || head["kid"] != "k2" || claims["iss"] != "https://rowcall.example" || claims["sub"] != "tok_alice" ||
		claims["aud"] != "https://idp.example/token" || claims["exp"].(float64)-claims["iat"].(float64) != 60 || claims["jti"] == "" {
		t.Fatalf("header %v, claims %v", head, claims)
	}
	var jwks struct {
		Keys []struct{ Kid, Kty, Crv, X string }
	}
	b, _ := json.Marshal(s.JWKS())
	json.Unmarshal(b, &jwks)
	if len(jwks.Keys) != 2 || jwks.Keys[0].Kid != "k2" || jwks.Keys[1].Kid != "k1" || jwks.Keys[0].Crv != "Ed25519" {
		t.Fatalf("jwks: %s", b)
	}
	pub, _ := base64.RawURLEncoding.DecodeString(jwks.Keys[0].X)
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	if !ed25519.Verify(pub, []byte(parts[0]+"."+parts[1]), sig) {
		t.Fatal("the published key does not verify the subject token")
	}
	forged, _ := json.Marshal(map[string]any{"iss": claims["iss"], "sub": "tok_bob", "aud": claims["aud"], "exp": claims["exp"]})
	if ed25519.Verify(pub, []byte(parts[0]+"."+base64.RawURLEncoding.EncodeToString(forged)), sig) {
		t.Fatal("a subject token verified for another holder")
	}
	// The signing key is not the sealing key, and a keyring of other keys publishes other keys.
	other, _ := json.Marshal((&Service{Keys: must(ParseKeys("k2:" + key()))}).JWKS())
	if strings.Contains(string(other), jwks.Keys[0].X) || strings.Contains(string(b), k1) || strings.Contains(string(b), k2) {
		t.Fatal("keys leak or repeat across keyrings")
	}
}

// A token_exchange provider needs a token endpoint (no authorization
// endpoint) and says what the token is for.
func TestExchangeConfig(t *testing.T) {
	good := `{"providers":{"sts":{"token_endpoint":"https://sts.example/token","client_id":"c","token_exchange":{"audience":"api"}}}}`
	if c, err := ReadConfig([]byte(good)); err != nil || c.Providers["sts"].TokenExchange.Audience != "api" {
		t.Fatalf("%v %v", c, err)
	}
	for _, bad := range []string{
		`{"providers":{"sts":{"client_id":"c","token_exchange":{"audience":"api"}}}}`,
		`{"providers":{"sts":{"token_endpoint":"https://sts.example/token","client_id":"c","token_exchange":{}}}}`,
		`{"providers":{"sts":{"token_endpoint":"https://sts.example/token","client_id":"c","token_exchange":{"resource":"not a url"}}}}`,
		`{"providers":{"sts":{"token_endpoint":"https://sts.example/token","client_id":"c"}}}`,
	} {
		if _, err := ReadConfig([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
