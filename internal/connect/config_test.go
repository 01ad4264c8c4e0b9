package connect

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/rowcall/rowcall"
)

func key() string {
	k := make([]byte, 32)
	rand.Read(k)
	return base64.StdEncoding.EncodeToString(k)
}

// Rotation: a keyring that lists the new key first seals with it and still
// opens what the old key sealed; a ciphertext opens only for the holder and
// provider it was sealed for; a keyring without the old key cannot open it.
func TestKeyringRotation(t *testing.T) {
	k1, k2 := key(), key()
	old, err := ParseKeys("k1:" + k1)
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`{"access_token":"at-1","refresh_token":"rt-1"}`)
	id, sealed := old.Seal(plain, "connection\x00tok_a\x00idp")
	if id != "k1" || bytes.Contains(sealed, []byte("at-1")) {
		t.Fatalf("sealed under %s: %q", id, sealed)
	}
	both, _ := ParseKeys("k2:" + k2 + ", k1:" + k1)
	if got, err := both.Open(id, sealed, "connection\x00tok_a\x00idp"); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("the rotated keyring does not open the old ciphertext: %v", err)
	}
	if _, err := both.Open(id, sealed, "connection\x00tok_b\x00idp"); err == nil {
		t.Fatal("a ciphertext opened for another holder")
	}
	if id, _ := both.Seal(plain, "x"); id != "k2" {
		t.Fatalf("the rotated keyring seals with %s, want k2", id)
	}
	if _, err := (must(ParseKeys("k2:" + k2))).Open("k1", sealed, "connection\x00tok_a\x00idp"); err == nil {
		t.Fatal("opened without the key")
	}
	for _, bad := range []string{"", "k1", "k1:short", "k1:" + k1 + ",k1:" + k2} {
		if _, err := ParseKeys(bad); err == nil {
			t.Errorf("ParseKeys(%q) accepted", bad)
		}
	}
}

func must(k *Keyring, err error) *Keyring {
	if err != nil {
		panic(err)
	}
	return k
}

// The sealing key alone makes a Service (for the providers the host
// registers itself) with no providers of the operator's; neither setting
// makes none; a bad key is refused.
func TestLoadKeyOnly(t *testing.T) {
	s, err := Load("", "k1:"+key(), nil, nil)
	if err != nil || s == nil || len(s.Providers) != 0 {
		t.Fatalf("key only: %v %v", s, err)
	}
	if s, err := Load("", "", nil, nil); s != nil || err != nil {
		t.Fatalf("neither: %v %v", s, err)
	}
	if _, err := Load("", "k1:short", nil, nil); err == nil {
		t.Fatal("a bad key was accepted")
	}
}

// A registered provider's name: mcp- and the server's host and port in the
// characters a provider's name allows; a long one is cut and made unique
// by a digest of the URL.
func TestMCPProviderName(t *testing.T) {
	for server, want := range map[string]string{
		"http://127.0.0.1:8931/mcp":  "mcp-127-0-0-1-8931",
		"https://API.Example.com/v1": "mcp-api-example-com",
	} {
		if got := MCPProviderName(server); got != want {
			t.Errorf("MCPProviderName(%s) = %s, want %s", server, got, want)
		}
	}
	long := "https://" + strings.Repeat("a", 80) + ".example.com/mcp"
	if got := MCPProviderName(long); len(got) > 64 || !rowcall.IsProviderName(got) {
		t.Errorf("MCPProviderName of a long host: %s", got)
	}
}

// An authorization response is checked against the provider's issuer
// exactly (RFC 9207): another issuer, the same with a trailing slash, or
// none when the server says it always names one, is refused; a provider
// whose issuer is unknown is not checked.
func TestCheckIssuer(t *testing.T) {
	named := &Provider{Issuer: "https://as.example.test", IssRequired: true}
	optional := &Provider{Issuer: "https://as.example.test"}
	for _, c := range []struct {
		p      *Provider
		query  string
		refuse bool
	}{
		{named, "code=c&iss=https%3A%2F%2Fas.example.test", false},
		{named, "code=c&iss=https%3A%2F%2Fevil.example.test", true},
		{named, "code=c&iss=https%3A%2F%2Fas.example.test%2F", true},
		{named, "code=c", true},
		{optional, "code=c", false},
		{optional, "code=c&iss=https%3A%2F%2Fevil.example.test", true},
		{&Provider{}, "code=c&iss=https%3A%2F%2Fevil.example.test", false},
	} {
		q, _ := url.ParseQuery(c.query)
		if err := checkIssuer(c.p, "mcp-as", q); (err != nil) != c.refuse {
			t.Errorf("issuer %q, answer %s: %v, want refused %v", c.p.Issuer, c.query, err, c.refuse)
		}
	}
}

// The host registers as a web client on a public origin and as a native
// one on http loopback.
func TestApplicationType(t *testing.T) {
	for redirect, want := range map[string]string{"https://rowcall.example/connect/callback": "web",
		"http://127.0.0.1:8080/connect/callback": "native", "http://localhost:1/connect/callback": "native", "http://[::1]:2/connect/callback": "native"} {
		if got := applicationType(redirect); got != want {
			t.Errorf("%s: %s, want %s", redirect, got, want)
		}
	}
}
