package connect

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
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
}

// Config is the file ROWCALL_CONNECTIONS names: {"providers": {NAME: Provider}}.
type Config struct {
	Providers map[string]*Provider `json:"providers"`
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
		case p.Discovery == "" && (p.AuthURL == "" || p.TokenURL == ""):
			return c, bad("give discovery_url, or authorization_endpoint and token_endpoint")
		case p.AuthStyle != "" && p.AuthStyle != "basic" && p.AuthStyle != "body":
			return c, bad(`auth_style: want "basic" or "body"`)
		}
		for _, u := range []string{p.Discovery, p.AuthURL, p.TokenURL} {
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
}

// ParseKeys reads ROWCALL_CONNECTIONS_KEY: "ID:BASE64KEY[,ID:BASE64KEY…]",
// each key 32 bytes (openssl rand -base64 32), the first sealing.
func ParseKeys(s string) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
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
