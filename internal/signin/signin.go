// Package signin signs people in with the organisation's OpenID provider: it
// implements api.SignIn with github.com/coreos/go-oidc/v3 and
// golang.org/x/oauth2, the same on every host (the worker's outbound HTTP
// goes through its fetch client, handed in as Config.Client).
//
// The provider is discovered from its issuer on first use and kept (a
// discovery that fails is tried again at the next sign-in). A sign-in is the
// authorization code flow with PKCE (S256) and a nonce: Begin makes the
// state, the nonce and the code verifier; Finish checks the answer's issuer
// (RFC 9207), redeems the code with the client secret and the verifier, and
// has go-oidc verify the ID token (signature against the provider's JWKS,
// issuer, audience = the client id, expiry) before it compares the nonce.
// What the ID token says of the person (iss, sub, email, name,
// preferred_username and the groups claim) becomes a rowcall.Claims, and the
// operator's mapping (ROWCALL_OIDC_ROLES) gives their groups a role.
package signin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/issuer"
)

// DefaultGroupsClaim is the ID token claim that lists a person's groups when
// ROWCALL_OIDC_GROUPS_CLAIM is unset.
const DefaultGroupsClaim = "groups"

// Scopes are the scopes every sign-in asks for; Config.Scopes adds to them.
var Scopes = []string{oidc.ScopeOpenID, "email", "profile"}

// Config is the operator's provider (the ROWCALL_OIDC_* settings).
type Config struct {
	Issuer       string // ROWCALL_OIDC_ISSUER: the issuer, as its discovery document names it
	ClientID     string // ROWCALL_OIDC_CLIENT_ID
	ClientSecret string // ROWCALL_OIDC_CLIENT_SECRET
	// Name is the provider's name on the console's button ("": the
	// issuer's host).
	Name string
	// GroupsClaim is the claim that lists groups ("": DefaultGroupsClaim).
	GroupsClaim string
	Scopes      []string            // asked for besides Scopes
	Roles       rowcall.RoleMapping // groups to roles
	// Client reaches the provider (discovery, the token endpoint, the
	// JWKS); nil is http.DefaultClient.
	Client *http.Client
	Now    func() time.Time // the clock ID tokens are checked by (time.Now when nil)
}

// Provider is one OpenID provider people sign in with (api.SignIn).
type Provider struct {
	cfg Config

	mu   sync.Mutex
	disc *discovered // nil until the first discovery that succeeds
}

// discovered is what discovery taught: the endpoints, the verifier over the
// provider's keys, and whether its answers always name their issuer.
type discovered struct {
	oauth       oauth2.Config // without RedirectURL: each sign-in sets its callback
	verifier    *oidc.IDTokenVerifier
	issRequired bool
}

// New returns the provider cfg names; nothing is fetched until the first
// sign-in. An issuer or client id missing is an error naming the setting.
func New(cfg Config) (*Provider, error) {
	u, err := url.Parse(cfg.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, &rowcall.Error{Code: rowcall.EInvalid, Message: "ROWCALL_OIDC_ISSUER: " + cfg.Issuer + " is not an http(s) URL",
			HowToFix: "give the provider's issuer, its discovery URL without /.well-known/openid-configuration (docs/people.md lists Keycloak's, Okta's, Entra ID's and Google's)"}
	}
	if cfg.ClientID == "" {
		return nil, &rowcall.Error{Code: rowcall.EInvalid, Message: "ROWCALL_OIDC_CLIENT_ID is not set, though ROWCALL_OIDC_ISSUER is",
			HowToFix: "register rowcall at the provider as a web application with the redirect URI https://HOST/login/callback, and give its client id and secret (ROWCALL_OIDC_CLIENT_ID, ROWCALL_OIDC_CLIENT_SECRET)"}
	}
	if cfg.Name == "" {
		cfg.Name = u.Hostname()
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = DefaultGroupsClaim
	}
	if cfg.Client == nil {
		cfg.Client = http.DefaultClient
	}
	return &Provider{cfg: cfg}, nil
}

// Name is the provider's name, for "Sign in with …".
func (p *Provider) Name() string { return p.cfg.Name }

// Role is the role the operator maps groups to ("" for none).
func (p *Provider) Role(groups []string) rowcall.Role { return p.cfg.Roles.Role(groups) }

// ctx is ctx with the provider's client, which go-oidc and oauth2 use for
// every request to the provider.
func (p *Provider) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, p.cfg.Client)
}

// discover returns the provider's discovered configuration, fetching it on
// first use.
func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.disc != nil {
		return p.disc, nil
	}
	op, err := oidc.NewProvider(p.ctx(ctx), p.cfg.Issuer)
	if err != nil {
		return nil, refused("provider", "the provider's discovery document could not be read: "+err.Error(),
			"the operator checks that ROWCALL_OIDC_ISSUER is the provider's issuer exactly and that the host reaches it; then sign in again")
	}
	var meta struct {
		IssRequired bool `json:"authorization_response_iss_parameter_supported"`
	}
	op.Claims(&meta)
	p.disc = &discovered{
		oauth: oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: op.Endpoint(),
			Scopes: append(slices.Clone(Scopes), p.cfg.Scopes...)},
		verifier:    op.Verifier(&oidc.Config{ClientID: p.cfg.ClientID, Now: p.cfg.Now}),
		issRequired: meta.IssRequired,
	}
	return p.disc, nil
}

// Begin starts a sign-in that returns to callback.
func (p *Provider) Begin(ctx context.Context, callback string) (string, rowcall.Login, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return "", rowcall.Login{}, err
	}
	l := rowcall.Login{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier()}
	conf := d.oauth
	conf.RedirectURL = callback
	return conf.AuthCodeURL(l.State, oidc.Nonce(l.Nonce), oauth2.S256ChallengeOption(l.Verifier)), l, nil
}

// Finish ends a sign-in: the answer's issuer checked, the code redeemed,
// the ID token verified and its nonce compared with l's.
func (p *Provider) Finish(ctx context.Context, callback string, l rowcall.Login, q url.Values) (rowcall.Claims, error) {
	d, err := p.discover(ctx)
	if err != nil {
		return rowcall.Claims{}, err
	}
	if err := issuer.Check(p.cfg.Issuer, d.issRequired, p.cfg.Name, q); err != nil {
		return rowcall.Claims{}, refused("issuer", err.Error(), "sign in again at /login; if it persists, the operator checks ROWCALL_OIDC_ISSUER")
	}
	code := q.Get("code")
	if code == "" {
		return rowcall.Claims{}, refused("code", "the provider's answer carries no code", "sign in again at /login")
	}
	conf := d.oauth
	conf.RedirectURL = callback
	tok, err := conf.Exchange(p.ctx(ctx), code, oauth2.VerifierOption(l.Verifier))
	if err != nil {
		return rowcall.Claims{}, refused("code", "the provider did not redeem the code: "+err.Error(),
			"sign in again at /login (a code is good once, for a short time); if it persists, the operator checks ROWCALL_OIDC_CLIENT_ID and ROWCALL_OIDC_CLIENT_SECRET")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return rowcall.Claims{}, refused("id_token", "the provider's token answer has no ID token", "the operator checks that the client at the provider is an OpenID Connect client")
	}
	idt, err := d.verifier.Verify(p.ctx(ctx), raw)
	if err != nil {
		return rowcall.Claims{}, refused("id_token", "the ID token was not accepted: "+err.Error(), "sign in again at /login")
	}
	if l.Nonce == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(l.Nonce)) != 1 {
		return rowcall.Claims{}, refused("nonce", "the ID token's nonce is not the one this sign-in sent", "sign in again at /login")
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return rowcall.Claims{}, refused("id_token", "the ID token does not match the access token issued with it: "+err.Error(), "sign in again at /login")
		}
	}
	return p.claims(idt)
}

// claims reads the person from a verified ID token.
func (p *Provider) claims(idt *oidc.IDToken) (rowcall.Claims, error) {
	var all map[string]any
	if err := idt.Claims(&all); err != nil {
		return rowcall.Claims{}, refused("id_token", "the ID token's claims could not be read: "+err.Error(), "sign in again at /login")
	}
	str := func(name string) string { s, _ := all[name].(string); return s }
	c := rowcall.Claims{Issuer: idt.Issuer, Subject: idt.Subject, Email: str("email"), Name: str("name"), UserName: str("preferred_username")}
	if c.Subject == "" {
		return rowcall.Claims{}, refused("id_token", "the ID token names no subject", "the operator checks the provider")
	}
	c.Groups = groups(all[p.cfg.GroupsClaim])
	return c, nil
}

// groups reads a groups claim: a list of strings, or one string (some
// providers send a lone group so); anything else is no groups.
func groups(v any) []string {
	switch g := v.(type) {
	case string:
		if g != "" {
			return []string{g}
		}
	case []any:
		var out []string
		for _, x := range g {
			if s, ok := x.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// refused is a sign-in refused for reason (signin_failed:<reason>).
func refused(reason, msg, fix string) *rowcall.Error {
	status := http.StatusForbidden
	if reason == "provider" {
		status = http.StatusBadGateway
	}
	return &rowcall.Error{Code: rowcall.ESignInFailed, Args: []string{reason}, Status: status, Message: msg, HowToFix: fix}
}

// random is 32 random bytes, base64url: a state or a nonce.
func random() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// SplitScopes reads ROWCALL_OIDC_SCOPES: scopes separated by spaces or
// commas.
func SplitScopes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}
