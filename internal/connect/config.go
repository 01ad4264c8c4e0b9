package connect

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/rowcall/rowcall"
)

// Provider is one upstream the operator lets callers connect to: an OAuth 2.1
// or OpenID provider, by its discovery document or its endpoints.
type Provider struct {
	// Discovery is the provider's OpenID discovery document
	// (https://accounts.example.com/.well-known/openid-configuration) or
	// OAuth server metadata; it fills the endpoints left empty.
	Discovery       string   `json:"discovery_url"`
	AuthURL         string   `json:"authorization_endpoint"`
	TokenURL        string   `json:"token_endpoint"`
	ClientID        string   `json:"client_id"`
	ClientSecretEnv string   `json:"client_secret_env"` // the NAME of the variable holding the client secret ("": a public client)
	Scopes          []string `json:"scopes"`
	AuthStyle       string   `json:"auth_style"` // "basic" (default) or "body": how the client authenticates at the token endpoint
	// TokenExchange, when set, gets each caller's token by token exchange
	// (RFC 8693) at the token endpoint instead of a stored connection: no
	// person connects, no authorization endpoint is needed.
	TokenExchange *Exchange `json:"token_exchange,omitempty"`
	// Resource, when set, is the resource indicator (RFC 8707) sent with the
	// authorization, code and refresh requests: the URL of the API the tokens are
	// for (an MCP server's, for a provider the host registered itself).
	Resource string `json:"resource,omitempty"`
	// Issuer, when set, is the authorization server's issuer: an
	// authorization response that names another is refused, and with
	// IssRequired one that names none (RFC 9207). A provider the host
	// registered itself takes both from the server's metadata.
	Issuer      string `json:"issuer,omitempty"`
	IssRequired bool   `json:"authorization_response_iss_parameter_supported,omitempty"`

	clientSecret string // a registered provider's client secret (registered.go)
}

// Exchange is what a token exchange asks the provider for: the access token
// of the calling credential's subject token (SubjectToken), for Audience
// and/or Resource (RFC 8693 §2.1), with the provider's Scopes.
type Exchange struct {
	Audience string `json:"audience"`
	Resource string `json:"resource"`
}

// Config is the file ROWCALL_CONNECTIONS names: {"providers": {NAME: Provider}}.
type Config struct {
	Providers map[string]*Provider `json:"providers"`
}

// Load is the Service that the settings ROWCALL_CONNECTIONS (the providers
// file's path, or its JSON itself: the worker's var) and
// ROWCALL_CONNECTIONS_KEY describe, reading files with readFile (nil: only
// JSON is accepted) and client secrets with secret; nil when
// both are unset. With only ROWCALL_CONNECTIONS_KEY, the Service has no
// providers but the ones the host registers itself (registered.go).
func Load(providers, keys string, readFile func(string) ([]byte, error), secret func(context.Context, string) (string, bool)) (*Service, error) {
	if strings.TrimSpace(providers) == "" {
		if strings.TrimSpace(keys) == "" {
			return nil, nil
		}
		ring, err := ParseKeys(keys)
		if err != nil {
			return nil, fmt.Errorf("ROWCALL_CONNECTIONS_KEY (the key that seals connections' tokens): %w", err)
		}
		return &Service{Providers: map[string]*Provider{}, Keys: ring, Secret: secret}, nil
	}
	data := []byte(providers)
	if !strings.HasPrefix(strings.TrimSpace(providers), "{") {
		if readFile == nil {
			return nil, errors.New(`ROWCALL_CONNECTIONS: want the providers' JSON itself, {"providers": {…}}`)
		}
		var err error
		if data, err = readFile(providers); err != nil {
			return nil, fmt.Errorf("ROWCALL_CONNECTIONS: %w", err)
		}
	}
	cfg, err := ReadConfig(data)
	if err != nil {
		return nil, fmt.Errorf("ROWCALL_CONNECTIONS: %w (the file is {\"providers\": {\"NAME\": {\"discovery_url\": …, \"client_id\": …, \"client_secret_env\": \"VAR\", \"scopes\": […]}}})", err)
	}
	ring, err := ParseKeys(keys)
	if err != nil {
		return nil, fmt.Errorf("ROWCALL_CONNECTIONS_KEY (the key that seals connections' tokens): %w", err)
	}
	return &Service{Providers: cfg.Providers, Keys: ring, Secret: secret}, nil
}

// ReadConfig parses and checks a providers file.
func ReadConfig(data []byte) (Config, error) {
	var c Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, err
	}
	for name, p := range c.Providers {
		bad := func(msg string) error { return fmt.Errorf("provider %q: %s", name, msg) }
		switch {
		case !rowcall.IsProviderName(name):
			return c, bad("a provider's name is 1 to 64 of a-z, 0-9, _ and -")
		case p == nil || p.ClientID == "":
			return c, bad("client_id is required")
		case p.TokenExchange != nil && p.Discovery == "" && p.TokenURL == "":
			return c, bad("token_exchange: give discovery_url or token_endpoint")
		case p.TokenExchange == nil && p.Discovery == "" && (p.AuthURL == "" || p.TokenURL == ""):
			return c, bad("give discovery_url, or authorization_endpoint and token_endpoint")
		case p.AuthStyle != "" && p.AuthStyle != "basic" && p.AuthStyle != "body":
			return c, bad(`auth_style: want "basic" or "body"`)
		}
		var aims []string
		if x := p.TokenExchange; x != nil {
			if x.Resource == "" && x.Audience == "" {
				return c, bad("token_exchange: give audience, resource or both (what the exchanged token is for)")
			}
			aims = append(aims, x.Resource)
		}
		for _, u := range append([]string{p.Discovery, p.AuthURL, p.TokenURL, p.Resource}, aims...) {
			if pu, err := url.Parse(u); u != "" && (err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "") {
				return c, bad(fmt.Sprintf("%q is not an absolute http or https URL", u))
			}
		}
	}
	return c, nil
}

// Keyring seals connections with AES-256-GCM. The first key seals; every key
// opens (a rotation lists the new key first and the old one after it until
// every connection was sealed again: each refresh reseals with the first).
type Keyring struct {
	ids   []string
	aeads map[string]cipher.AEAD
	signs map[string]ed25519.PrivateKey // subject tokens' keys (subject.go), derived from the sealing keys
}

// ParseKeys reads ROWCALL_CONNECTIONS_KEY: "ID:BASE64KEY[,ID:BASE64KEY…]",
// each key 32 bytes (openssl rand -base64 32), the first sealing.
func ParseKeys(s string) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}, signs: map[string]ed25519.PrivateKey{}}
	for _, part := range strings.Split(s, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(part), ":")
		key, err := base64.StdEncoding.DecodeString(b64)
		if !ok || id == "" || err != nil || len(key) != 32 {
			return nil, errors.New(`want ID:BASE64KEY[,ID:BASE64KEY…], each key 32 bytes in base64 (openssl rand -base64 32), e.g. k1:…`)
		}
		block, _ := aes.NewCipher(key)
		aead, _ := cipher.NewGCM(block)
		if _, dup := k.aeads[id]; dup {
			return nil, fmt.Errorf("key id %q is listed twice", id)
		}
		k.ids, k.aeads[id] = append(k.ids, id), aead
		seed, _ := hkdf.Key(sha256.New, key, nil, subjectKeyInfo, ed25519.SeedSize)
		k.signs[id] = ed25519.NewKeyFromSeed(seed)
	}
	return k, nil
}

// Seal encrypts plain under the first key, bound to context (which Open must
// repeat): it returns the key's id and nonce‖ciphertext.
func (k *Keyring) Seal(plain []byte, context string) (keyID string, sealed []byte) {
	id := k.ids[0]
	aead := k.aeads[id]
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	return id, aead.Seal(nonce, nonce, plain, []byte(context))
}

// Open decrypts what Seal made with the key keyID.
func (k *Keyring) Open(keyID string, sealed []byte, context string) ([]byte, error) {
	aead, ok := k.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("sealed with key %q, which ROWCALL_CONNECTIONS_KEY no longer lists", keyID)
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("sealed value too short")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(context))
}
