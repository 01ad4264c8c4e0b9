package connect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/rowcall/rowcall"
)

// ProviderStore keeps the providers the host registered itself
// (sqlstore.Store): a provider is sealed with the connections' keys, bound
// to its name.
type ProviderStore interface {
	PutProvider(ctx context.Context, p rowcall.SealedProvider) error
	GetProvider(ctx context.Context, name string) (rowcall.SealedProvider, error) // ENotFound when none
}

// Provider is the provider named name: the operator's (ROWCALL_CONNECTIONS),
// else one the host registered (RegisterMCP); nil when there is none.
func (s *Service) Provider(ctx context.Context, name string) *Provider {
	if p := s.Providers[name]; p != nil {
		return p
	}
	if v, ok := s.providers.Load(name); ok {
		return v.(*Provider)
	}
	if s.Registry == nil || !rowcall.IsProviderName(name) {
		return nil
	}
	sp, err := s.Registry.GetProvider(ctx, name)
	if err != nil {
		return nil
	}
	p, err := s.openProvider(sp)
	if err != nil {
		return nil
	}
	s.providers.Store(name, p)
	return p
}

// registered is a registered provider as sealed: the provider with its
// client secret.
type registered struct {
	*Provider
	Secret string `json:"client_secret,omitempty"`
}

func (s *Service) openProvider(sp rowcall.SealedProvider) (*Provider, error) {
	plain, err := s.Keys.Open(sp.KeyID, sp.Sealed, "provider\x00"+sp.Name)
	if err != nil {
		return nil, err
	}
	r := registered{Provider: &Provider{}}
	if err := json.Unmarshal(plain, &r); err != nil {
		return nil, err
	}
	r.clientSecret = r.Secret
	return r.Provider, nil
}

// MCPProviderName is the name of the provider the host registers for the
// MCP server at server: mcp- and the server's host and port, in the
// characters a provider's name allows (mcp-api-example-com).
func MCPProviderName(server string) string {
	host := server
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		host = u.Host
	}
	name := "mcp-" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, host)
	if len(name) > 64 {
		name = name[:55] + "-" + digest(server)
	}
	return name
}

// digest is 8 hex digits of s's SHA-256.
func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// RegisterMCP makes the host a client of the authorization server asm that
// the MCP server at server names, by dynamic client registration (RFC 7591,
// through the outbound client), and keeps that client as a provider named
// after the server (MCPProviderName; a name already taken by the operator's
// providers or another server's gets a digest of the URL): its redirect URI
// is the host's Base + CallbackPath, its resource indicator (RFC 8707)
// resource, and it asks for scopes (with offline_access when the server
// offers it, for a refresh token). A server already registered keeps its
// provider, which RegisterMCP returns. A person then connects to it as to
// any provider (Link), and rows call the server with
// bearer:connection:NAME.
func (s *Service) RegisterMCP(ctx context.Context, server, resource string, scopes []string, asm *oauthex.AuthServerMeta) (string, error) {
	if s.Registry == nil {
		return "", &rowcall.Error{Code: rowcall.EInvalid, Message: "this host keeps no registered providers", HowToFix: "set ROWCALL_CONNECTIONS_KEY"}
	}
	name := MCPProviderName(server)
	sp, err := s.Registry.GetProvider(ctx, name)
	if err == nil && sp.Server != server || s.Providers[name] != nil {
		name = strings.TrimSuffix(name[:min(len(name), 55)], "-") + "-" + digest(server)
		sp, err = s.Registry.GetProvider(ctx, name)
	}
	switch {
	case err == nil && sp.Server == server:
		if _, err := s.openProvider(sp); err == nil {
			return name, nil
		} // sealed with a key no longer listed: register again
	case err == nil:
		return "", fmt.Errorf("the provider name %s is another server's (%s)", name, sp.Server)
	case rowcall.ErrorCode(err) != rowcall.ENotFound:
		return "", fmt.Errorf("reading the provider %s: %w", name, err)
	}
	for _, u := range []string{asm.AuthorizationEndpoint, asm.TokenEndpoint, asm.RegistrationEndpoint} {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
			if u == asm.RegistrationEndpoint && u == "" {
				return "", fmt.Errorf("the authorization server %s offers no dynamic client registration (RFC 7591): no registration_endpoint in its metadata", asm.Issuer)
			}
			return "", fmt.Errorf("the authorization server %s names %q, not an absolute http(s) endpoint", asm.Issuer, u)
		}
	}
	if slices.Contains(asm.ScopesSupported, "offline_access") && len(scopes) > 0 && !slices.Contains(scopes, "offline_access") {
		scopes = append(slices.Clip(scopes), "offline_access")
	}
	method := "client_secret_basic"
	switch m := asm.TokenEndpointAuthMethodsSupported; {
	case len(m) == 0, slices.Contains(m, "client_secret_basic"):
	case slices.Contains(m, "client_secret_post"):
		method = "client_secret_post"
	case slices.Contains(m, "none"):
		method = "none"
	default:
		return "", fmt.Errorf("the authorization server %s accepts none of client_secret_basic, client_secret_post, none at its token endpoint", asm.Issuer)
	}
	redirect := s.Base(ctx) + CallbackPath
	meta := &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: method, ApplicationType: applicationType(redirect),
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, ClientName: "rowcall", Scope: strings.Join(scopes, " ")}
	got, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, meta, s.Client)
	if err != nil {
		return "", fmt.Errorf("registering at %s (RFC 7591): %w", asm.RegistrationEndpoint, err)
	}
	if got.TokenEndpointAuthMethod != "" {
		method = got.TokenEndpointAuthMethod
	}
	p := &Provider{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint, ClientID: got.ClientID, Scopes: scopes, Resource: resource,
		Issuer: asm.Issuer, IssRequired: asm.AuthorizationResponseIssParameterSupported, AuthStyle: "basic", clientSecret: got.ClientSecret}
	if method != "client_secret_basic" { // client_secret_post, or none: a public client names itself in the form
		p.AuthStyle = "body"
	}
	plain, _ := json.Marshal(registered{Provider: p, Secret: got.ClientSecret})
	kid, sealed := s.Keys.Seal(plain, "provider\x00"+name)
	if err := s.Registry.PutProvider(ctx, rowcall.SealedProvider{Name: name, Server: server, KeyID: kid, Sealed: sealed}); err != nil {
		return "", fmt.Errorf("storing the provider %s: %w", name, err)
	}
	s.providers.Store(name, p)
	return name, nil
}

// applicationType is what the host registers as (OpenID Connect Dynamic
// Client Registration's application_type, which the MCP authorization spec
// asks for): "web" for a redirect URI on a public origin, "native" for one
// on loopback over http, which a web client may not use.
func applicationType(redirect string) string {
	if u, err := url.Parse(redirect); err == nil && u.Scheme == "http" {
		if h := u.Hostname(); h == "localhost" || net.ParseIP(h).IsLoopback() {
			return "native"
		}
	}
	return "web"
}
