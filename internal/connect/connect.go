// Package connect lets each caller call upstreams with its own account: the
// operator names providers (ReadConfig, the file ROWCALL_CONNECTIONS names)
// and a sealing key (ParseKeys, ROWCALL_CONNECTIONS_KEY); a row's auth
// bearer:connection:NAME then sends the calling credential's own access
// token. A Service runs the authorization code flow with PKCE as the client
// (Link, Begin, Finish), keeps the tokens sealed in the store, and hands them
// to calls (Token), refreshing them when they expire. Besides the
// operator's providers, the host registers its own for MCP servers that
// need a person's sign-in (RegisterMCP, kept in the database: registered.go).
//
//	svc := &connect.Service{Providers: cfg.Providers, Keys: keys, Store: store, Client: outbound, Secret: lookup, Base: base}
//	dispatcher.Connect = svc.Token
package connect

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/issuer"
)

// Service runs connections. Its fields are set before first use.
type Service struct {
	Providers map[string]*Provider
	Keys      *Keyring
	Store     rowcall.Connections
	Registry  ProviderStore                                         // keeps the providers the host registers itself (registered.go); nil: none
	Client    *http.Client                                          // reaches the providers (discovery, token requests): the outbound policy applies
	Secret    func(ctx context.Context, name string) (string, bool) // reads a provider's client secret by its variable's name (the worker: from ctx's request)
	Base      func(ctx context.Context) string                      // the host's public base URL: links and the redirect URI (Base + CallbackPath)
	Now       func() time.Time                                      // nil: time.Now

	refresh   sync.Map // holder\x00provider → *sync.Mutex: one refresh at a time per connection in this process
	endpoints sync.Map // provider → oauth2.Endpoint, from its discovery document
	exchanges sync.Map // holder\x00provider → *oauth2.Token from a token exchange (exchange.go)
	providers sync.Map // name → *Provider the host registered, read from Registry (registered.go)
}

// CallbackPath is where providers send the caller back: register
// PUBLIC_URL + CallbackPath as the client's redirect URI.
const CallbackPath = "/connect/callback"

// Life of what the flow hands around: a link to connect (in a
// connection_required answer) and the state of one authorization request.
const (
	linkLife  = 15 * time.Minute
	stateLife = 10 * time.Minute
	// expiryMargin: a token this close to its expiry is refreshed before use.
	expiryMargin = 5 * time.Second
)

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Token is the access token of holder's connection to provider, refreshed
// when it is about to expire (for a token_exchange provider: the token the
// provider exchanged holder's subject token for, exchange.go); fail is ERR:auth:connection_required:<provider>
// (or connection_expired when the provider refused to refresh it) with the
// link that connects.
func (s *Service) Token(ctx context.Context, holder, provider string) (string, *rowcall.Failure) {
	p := s.Provider(ctx, provider)
	if p == nil {
		return "", rowcall.Fail("auth", "unknown_provider", provider).
			Because("no provider of that name in this host's ROWCALL_CONNECTIONS, nor one it registered at an MCP server's import; check the row's auth")
	}
	lock, _ := s.refresh.LoadOrStore(holder+"\x00"+provider, &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()
	if p.TokenExchange != nil {
		return s.exchanged(ctx, holder, provider, p)
	}
	sc, err := s.Store.GetConnection(ctx, holder, provider)
	if err != nil {
		if rowcall.ErrorCode(err) == rowcall.ENotFound {
			return "", s.needed(ctx, "connection_required", holder, provider, "this caller has not connected its "+provider+" account")
		}
		return "", rowcall.Fail("auth", "connection_store", provider).Because("the host could not read the connection; try again")
	}
	tok, err := s.open(sc)
	if err != nil {
		return "", s.needed(ctx, "connection_unreadable", holder, provider, "the stored connection cannot be opened ("+err.Error()+")")
	}
	if s.good(tok) {
		return tok.AccessToken, nil
	}
	if tok.RefreshToken == "" {
		return "", s.needed(ctx, "connection_expired", holder, provider, "the access token expired and the provider gave no refresh token")
	}
	cfg, err := s.config(ctx, provider)
	if err == nil {
		var fresh *oauth2.Token
		if fresh, err = s.renew(ctx, cfg, p, tok.RefreshToken); err == nil {
			var stored bool
			if stored, err = s.Store.ReplaceConnection(ctx, sc, s.sealConnection(holder, provider, fresh)); err == nil {
				if stored {
					return fresh.AccessToken, nil
				}
				if at, fail, ok := s.changed(ctx, sc); ok {
					return at, fail
				}
			}
		}
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if at, fail, ok := s.changed(ctx, sc); ok {
			return at, fail
		}
		return "", s.needed(ctx, "connection_expired", holder, provider, "the provider refused to refresh the token ("+re.ErrorCode+")")
	}
	return "", rowcall.Fail("auth", "connection_refresh", provider).Because("the provider could not be reached to refresh the token; try again")
}

// renew redeems refresh for a fresh token at cfg's token endpoint, with p's
// resource indicator (RFC 8707) when it has one: x/oauth2's TokenSource
// sends no extra parameter, so such a refresh is the same request made
// with the grant_type overridden. A provider that sends no new refresh
// token leaves the old one in use, as TokenSource does.
func (s *Service) renew(ctx context.Context, cfg *oauth2.Config, p *Provider, refresh string) (*oauth2.Token, error) {
	if p.Resource == "" {
		return cfg.TokenSource(s.clientCtx(ctx), &oauth2.Token{RefreshToken: refresh}).Token()
	}
	cc := clientcredentials.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle,
		EndpointParams: url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "resource": {p.Resource}}}
	tok, err := cc.Token(s.clientCtx(ctx))
	if err == nil && tok.RefreshToken == "" {
		tok.RefreshToken = refresh
	}
	return tok, err
}

// good reports whether tok's access token is not about to expire.
func (s *Service) good(tok *oauth2.Token) bool {
	return tok.Expiry.IsZero() || s.now().Add(expiryMargin).Before(tok.Expiry)
}

// changed answers a call whose refresh of sc was not stored, or was refused,
// when the connection changed while the call waited on the provider: deleted
// (the holder disconnected, or its token was revoked: the call stops and the
// connection stays deleted), or replaced by another host's refresh or a new
// connection (its access token serves the call when still good; a provider
// that rotates refresh tokens refuses the one the other host used first).
// ok is false when the connection is as the call read it.
func (s *Service) changed(ctx context.Context, sc rowcall.SealedConnection) (string, *rowcall.Failure, bool) {
	now, err := s.Store.GetConnection(ctx, sc.Holder, sc.Provider)
	switch {
	case rowcall.ErrorCode(err) == rowcall.ENotFound:
		return "", s.needed(ctx, "connection_required", sc.Holder, sc.Provider, "this caller's "+sc.Provider+" connection was revoked while the call refreshed it"), true
	case err != nil || now.KeyID == sc.KeyID && bytes.Equal(now.Sealed, sc.Sealed):
		return "", nil, false
	}
	if tok, err := s.open(now); err == nil && s.good(tok) {
		return tok.AccessToken, nil, true
	}
	return "", nil, false
}

// needed is the failure that sends the caller to connect: code, provider,
// and why, with the link.
func (s *Service) needed(ctx context.Context, code, holder, provider, why string) *rowcall.Failure {
	return rowcall.Fail("auth", code, provider).Because(why + "; a person opens " + s.Link(ctx, holder, provider) +
		" in a browser to connect it (the link works for " + linkLife.String() + "), then the call is made again")
}

// invitation is a sealed link's content, and an authorization request's state.
type invitation struct {
	Holder   string `json:"h"`
	Provider string `json:"p"`
	Expires  int64  `json:"e"`
	Verifier string `json:"v,omitempty"`
}

// Link is the console page that connects holder to provider: its c
// parameter is sealed, so nobody can make one for another holder.
func (s *Service) Link(ctx context.Context, holder, provider string) string {
	return s.Base(ctx) + "/connect?" + url.Values{"c": {s.seal(invitation{Holder: holder, Provider: provider, Expires: s.now().Add(linkLife).Unix()}, "link")}}.Encode()
}

// Invitation opens a Link's c parameter.
func (s *Service) Invitation(ctx context.Context, c string) (holder, provider string, err error) {
	inv, err := s.unseal(ctx, c, "link")
	return inv.Holder, inv.Provider, err
}

// Begin is the provider's authorization URL for the invitation c, with a
// fresh PKCE verifier sealed in its state.
func (s *Service) Begin(ctx context.Context, c string) (string, error) {
	inv, err := s.unseal(ctx, c, "link")
	if err != nil {
		return "", err
	}
	cfg, err := s.config(ctx, inv.Provider)
	if err != nil {
		return "", err
	}
	inv.Verifier, inv.Expires = oauth2.GenerateVerifier(), s.now().Add(stateLife).Unix()
	return cfg.AuthCodeURL(s.seal(inv, "state"), s.resource(ctx, inv.Provider, oauth2.S256ChallengeOption(inv.Verifier))...), nil
}

// Finish redeems the provider's code in callback (the query of its redirect
// back) for the request whose state it sent back, and stores the tokens
// sealed. It returns whose connection it made. A provider whose issuer is
// known has its answer's iss checked first (RFC 9207, checkIssuer).
func (s *Service) Finish(ctx context.Context, callback url.Values) (holder, provider string, err error) {
	inv, err := s.unseal(ctx, callback.Get("state"), "state")
	if err != nil {
		return "", "", err
	}
	cfg, err := s.config(ctx, inv.Provider)
	if err != nil {
		return "", "", err
	}
	if err := checkIssuer(s.Provider(ctx, inv.Provider), inv.Provider, callback); err != nil {
		return "", "", err
	}
	tok, err := cfg.Exchange(s.clientCtx(ctx), callback.Get("code"), s.resource(ctx, inv.Provider, oauth2.VerifierOption(inv.Verifier))...)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return "", "", fmt.Errorf("the provider refused the code (%s)", re.ErrorCode)
		}
		return "", "", errors.New("the provider could not be reached to redeem the code")
	}
	return inv.Holder, inv.Provider, s.put(ctx, inv.Holder, inv.Provider, tok)
}

// checkIssuer refuses an authorization response whose iss is not p's
// issuer, or is missing when p says it always sends one (issuer.Check, RFC
// 9207). A provider whose issuer is not known (configured by its endpoints
// alone) is not checked.
func checkIssuer(p *Provider, provider string, callback url.Values) error {
	if p == nil {
		return nil
	}
	return issuer.Check(p.Issuer, p.IssRequired, provider, callback)
}

// put seals tok as holder's connection to provider.
func (s *Service) put(ctx context.Context, holder, provider string, tok *oauth2.Token) error {
	return s.Store.PutConnection(ctx, s.sealConnection(holder, provider, tok))
}

// sealConnection seals tok as holder's connection to provider.
func (s *Service) sealConnection(holder, provider string, tok *oauth2.Token) rowcall.SealedConnection {
	plain, _ := json.Marshal(tok)
	kid, sealed := s.Keys.Seal(plain, "connection\x00"+holder+"\x00"+provider)
	c := rowcall.SealedConnection{Connection: rowcall.Connection{Holder: holder, Provider: provider}, KeyID: kid, Sealed: sealed}
	if !tok.Expiry.IsZero() {
		c.ExpiresAt = tok.Expiry.UTC().Format(rowcall.Timestamp)
	}
	return c
}

// open decrypts a stored connection: the sealing is bound to its holder and
// provider, so a row copied to another holder does not open.
func (s *Service) open(sc rowcall.SealedConnection) (*oauth2.Token, error) {
	plain, err := s.Keys.Open(sc.KeyID, sc.Sealed, "connection\x00"+sc.Holder+"\x00"+sc.Provider)
	if err != nil {
		return nil, err
	}
	var tok oauth2.Token
	return &tok, json.Unmarshal(plain, &tok)
}

func (s *Service) seal(inv invitation, purpose string) string {
	plain, _ := json.Marshal(inv)
	kid, sealed := s.Keys.Seal(plain, purpose)
	return kid + "." + base64.RawURLEncoding.EncodeToString(sealed)
}

func (s *Service) unseal(ctx context.Context, v, purpose string) (invitation, error) {
	var inv invitation
	kid, b64, _ := strings.Cut(v, ".")
	raw, err := base64.RawURLEncoding.DecodeString(b64)
	if err == nil {
		var plain []byte
		if plain, err = s.Keys.Open(kid, raw, purpose); err == nil {
			err = json.Unmarshal(plain, &inv)
		}
	}
	switch {
	case err != nil:
		return inv, errors.New("the link is not one this host made")
	case s.now().Unix() > inv.Expires:
		return inv, errors.New("the link expired; make the call again for a new one")
	case s.Provider(ctx, inv.Provider) == nil:
		return inv, errors.New("the provider " + inv.Provider + " is no longer configured")
	}
	return inv, nil
}

func (s *Service) clientCtx(ctx context.Context) context.Context {
	if s.Client == nil {
		return ctx
	}
	return context.WithValue(ctx, oauth2.HTTPClient, s.Client)
}

// config is provider's OAuth client, its endpoints read from its discovery
// document on first use.
func (s *Service) config(ctx context.Context, provider string) (*oauth2.Config, error) {
	p := s.Provider(ctx, provider)
	if p == nil {
		return nil, fmt.Errorf("provider %s: no longer configured", provider)
	}
	ep := oauth2.Endpoint{AuthURL: p.AuthURL, TokenURL: p.TokenURL, AuthStyle: oauth2.AuthStyleInHeader}
	if p.AuthStyle == "body" {
		ep.AuthStyle = oauth2.AuthStyleInParams
	}
	if ep.AuthURL == "" || ep.TokenURL == "" {
		found, ok := s.endpoints.Load(provider)
		if !ok {
			d, err := s.discover(ctx, p.Discovery)
			if err != nil {
				return nil, fmt.Errorf("provider %s: discovery at %s: %w", provider, p.Discovery, err)
			}
			found, _ = s.endpoints.LoadOrStore(provider, d)
		}
		d := found.(oauth2.Endpoint)
		if ep.AuthURL == "" {
			ep.AuthURL = d.AuthURL
		}
		if ep.TokenURL == "" {
			ep.TokenURL = d.TokenURL
		}
	}
	if ep.AuthURL == "" && p.TokenExchange == nil {
		return nil, fmt.Errorf("provider %s: no authorization_endpoint in its discovery document %s", provider, p.Discovery)
	}
	cfg := &oauth2.Config{ClientID: p.ClientID, Endpoint: ep, Scopes: p.Scopes, RedirectURL: s.Base(ctx) + CallbackPath}
	if p.ClientSecretEnv != "" {
		cfg.ClientSecret, _ = s.Secret(ctx, p.ClientSecretEnv)
	} else {
		cfg.ClientSecret = p.clientSecret
	}
	return cfg, nil
}

// resource is opts with provider's resource indicator (RFC 8707), if it has one.
func (s *Service) resource(ctx context.Context, provider string, opts ...oauth2.AuthCodeOption) []oauth2.AuthCodeOption {
	if p := s.Provider(ctx, provider); p != nil && p.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", p.Resource))
	}
	return opts
}

// maxDiscovery bounds a discovery document.
const maxDiscovery = 1 << 20

func (s *Service) discover(ctx context.Context, u string) (oauth2.Endpoint, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return oauth2.Endpoint{}, err
	}
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return oauth2.Endpoint{}, errors.New("unreachable")
	}
	defer res.Body.Close()
	var doc struct {
		Auth  string `json:"authorization_endpoint"`
		Token string `json:"token_endpoint"`
	}
	if res.StatusCode != http.StatusOK {
		return oauth2.Endpoint{}, fmt.Errorf("answered %d", res.StatusCode)
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, res.Body, maxDiscovery)).Decode(&doc); err != nil || doc.Token == "" {
		return oauth2.Endpoint{}, errors.New("no token_endpoint in the document")
	}
	return oauth2.Endpoint{AuthURL: doc.Auth, TokenURL: doc.Token}, nil
}
