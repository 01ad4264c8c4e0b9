package connect

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/rowcall/rowcall"
)

// Token exchange (RFC 8693): for a provider with token_exchange, the
// calling credential's access token is what the provider issues for this
// host's subject token naming that credential, not a stored connection
// (docs/RATIONALE.md, "Why is the subject token of a token exchange a JWT
// this host signs?").
const (
	// GrantTokenExchange and the token types of RFC 8693 §3.
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeJWT       = "urn:ietf:params:oauth:token-type:jwt"
	TokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
	// JWKSPath is where a host publishes its subject tokens' public keys.
	JWKSPath = "/.well-known/jwks.json"
	// subjectLife is how long a subject token is good for: one exchange.
	subjectLife = time.Minute
	// unexpiringLife is how long an exchanged token that came without
	// expires_in is used before it is exchanged again.
	unexpiringLife = 5 * time.Minute
	// subjectKeyInfo derives a subject-token signing key from a sealing key
	// (HKDF-SHA256): one variable holds both, and a rotation rotates both.
	subjectKeyInfo = "rowcall connections: subject token signing key"
)

// SubjectToken is the JWT (EdDSA, signed with the first key) this host
// presents to a provider for holder: iss is the host's public URL, sub the
// holder (a capability token's id, shared by every token one OAuth grant
// issues, or "owner"), aud the provider's token endpoint; it lives a minute.
func (s *Service) SubjectToken(ctx context.Context, holder, audience string) string {
	id := s.Keys.ids[0]
	now := s.now()
	jti := make([]byte, 16)
	rand.Read(jti)
	head, _ := json.Marshal(map[string]string{"alg": "EdDSA", "typ": "JWT", "kid": id})
	claims, _ := json.Marshal(map[string]any{"iss": s.Base(ctx), "sub": holder, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(subjectLife).Unix(), "jti": base64.RawURLEncoding.EncodeToString(jti)})
	signing := base64.RawURLEncoding.EncodeToString(head) + "." + base64.RawURLEncoding.EncodeToString(claims)
	return signing + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(s.Keys.signs[id], []byte(signing)))
}

// JWKS is the JSON Web Key Set of every key that signs subject tokens (the
// keyring's keys, so a rotation publishes the old key beside the new one).
func (s *Service) JWKS() map[string]any {
	keys := []map[string]string{}
	for _, id := range s.Keys.ids {
		keys = append(keys, map[string]string{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": id,
			"x": base64.RawURLEncoding.EncodeToString(s.Keys.signs[id].Public().(ed25519.PublicKey))})
	}
	return map[string]any{"keys": keys}
}

// exchanged is holder's access token at provider from a token exchange, kept
// in this process's memory only until it expires (never in the store).
func (s *Service) exchanged(ctx context.Context, holder, provider string, p *Provider) (string, *rowcall.Failure) {
	key := holder + "\x00" + provider
	if v, ok := s.exchanges.Load(key); ok {
		if tok := v.(*oauth2.Token); s.good(tok) {
			return tok.AccessToken, nil
		}
		s.exchanges.Delete(key)
	}
	cfg, err := s.config(ctx, provider)
	if err != nil {
		return "", rowcall.Fail("auth", "exchange_unreachable", provider).Because(err.Error() + "; try again")
	}
	params := url.Values{"grant_type": {GrantTokenExchange}, "requested_token_type": {TokenTypeAccess},
		"subject_token": {s.SubjectToken(ctx, holder, cfg.Endpoint.TokenURL)}, "subject_token_type": {TokenTypeJWT}}
	if x := p.TokenExchange; x.Audience != "" {
		params.Set("audience", x.Audience)
	}
	if x := p.TokenExchange; x.Resource != "" {
		params.Set("resource", x.Resource)
	}
	cc := clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: cfg.Endpoint.TokenURL,
		Scopes: cfg.Scopes, EndpointParams: params, AuthStyle: cfg.Endpoint.AuthStyle}
	tok, err := cc.Token(s.clientCtx(ctx))
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		return "", rowcall.Fail("auth", "exchange_refused", provider).Because("the provider refused to exchange this caller's subject token (" +
			re.ErrorCode + "); the operator checks that " + provider + " trusts this host's subject tokens (issuer " + s.Base(ctx) +
			", keys at " + s.Base(ctx) + JWKSPath + ") and accepts the caller " + holder)
	case err != nil:
		return "", rowcall.Fail("auth", "exchange_unreachable", provider).Because("the provider could not be reached to exchange the caller's subject token; try again")
	}
	if tok.Expiry.IsZero() {
		tok.Expiry = s.now().Add(unexpiringLife)
	}
	s.exchanges.Store(key, tok)
	return tok.AccessToken, nil
}
