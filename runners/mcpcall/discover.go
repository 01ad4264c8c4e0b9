package mcpcall

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/redact"
	"github.com/rowcall/rowcall/runners/httpcall"
)

// authorized runs f on the pooled session for the server at u under the
// row's auth column, f given the credential values to redact. An oauth:
// column without token_url is completed by the server's own metadata: the
// first call goes without a token, and the server's 401 starts discovery
// (discover); the endpoint found is kept for the server, and a token the
// server refuses later sends discovery again, once per call. fail is the
// call's failure output when it did not succeed, and ref how the server
// refused it.
func (r *Runner) authorized(ctx context.Context, key string, u *url.URL, auth string, env rowcall.Env, f func(ctx context.Context, s *httpSession, secrets []string) error) (fail rowcall.Output, ref refusal) {
	server := u.String()
	var ep httpcall.TokenEndpoint
	if v, ok := r.endpoints.Load(server); ok {
		ep = v.(httpcall.TokenEndpoint)
	}
	for attempt := 0; ; attempt++ {
		a, out := r.cfg.HTTP.Authorize(ctx, "mcp", key, u, auth, env, ep)
		if out.Failed() {
			return out, ref
		}
		var err error
		ref, err = r.onHTTP(ctx, a, func(ctx context.Context, s *httpSession) error { return f(ctx, s, a.Secrets) })
		if err == nil {
			return rowcall.Output{}, ref
		}
		if ref.status != http.StatusUnauthorized || !a.Discover || attempt > 0 || ctx.Err() != nil {
			return r.failure(ctx, err, ref.status, a.Secrets), ref
		}
		if ep, err = r.discover(ctx, u, ref.challenge); err != nil {
			return rowcall.Fail("mcp", "auth_discovery", redact.String(err.Error(), a.Secrets)).
				Because("the server asked for a token but its metadata names no usable token endpoint; write the authorization server's token endpoint as token_url in the row's oauth: auth").
				Output(), ref
		}
		r.endpoints.Store(server, ep)
	}
}

// discover finds the token endpoint of the authorization server that the
// MCP server at u names (authServer). The challenge's scope, else the
// resource's scopes_supported, becomes the scope; the server's
// token_endpoint_auth_methods_supported chooses Basic or form
// authentication of a client with a secret. The issuer is the audience of a
// private_key client's assertion (httpcall.TokenEndpoint).
func (r *Runner) discover(ctx context.Context, u *url.URL, challenge []string) (httpcall.TokenEndpoint, error) {
	var ep httpcall.TokenEndpoint
	as, err := r.authServer(ctx, u, challenge, false)
	if err != nil {
		return ep, err
	}
	ep.URL, ep.Issuer, ep.Scope = as.Meta.TokenEndpoint, as.Meta.Issuer, strings.Join(as.Scopes, " ")
	if m := as.Meta.TokenEndpointAuthMethodsSupported; !slices.Contains(m, "client_secret_basic") && slices.Contains(m, "client_secret_post") {
		ep.AuthStyle = "body"
	}
	return ep, nil
}

// AuthServer is the authorization server an MCP server names, as discovery
// found it.
type AuthServer struct {
	Resource string                  // the resource its tokens are for (RFC 8707): the protected resource metadata's, or the server's URL
	Scopes   []string                // the 401 challenge's scope, else the resource's scopes_supported
	Meta     *oauthex.AuthServerMeta // its metadata (RFC 8414 or OpenID Connect discovery)
}

// authServer finds the authorization server that the MCP server at u
// names, by the MCP authorization spec (2025-11-25): the protected resource
// metadata (RFC 9728) at the resource_metadata URL of the 401's challenge,
// else at the well-known locations for u's path and for its root, whose
// resource must be the server's URL; then the first authorization server's
// metadata (RFC 8414, or OpenID Connect discovery). Every URL must be https
// or loopback (the SDK's oauthex checks), and every request goes through
// the runner's client (the outbound policy). legacy adds the 2025-03-26
// spec's rule when the server publishes no resource metadata and its
// challenge names none: its own origin is the authorization server, and
// without metadata there its endpoints are /authorize, /token and
// /register.
func (r *Runner) authServer(ctx context.Context, u *url.URL, challenge []string, legacy bool) (*AuthServer, error) {
	client := r.cfg.Client
	if client == nil {
		client = &http.Client{}
	}
	var metadata, scope string
	if cs, err := oauthex.ParseWWWAuthenticate(challenge); err == nil {
		for _, c := range cs {
			if c.Scheme == "bearer" {
				metadata, scope = c.Params["resource_metadata"], c.Params["scope"]
			}
		}
	}
	resource := u.String()
	atPath, atRoot, root := *u, *u, *u
	atPath.RawQuery, atPath.Fragment = "", ""
	atPath.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	atRoot = atPath
	atRoot.Path = "/.well-known/oauth-protected-resource"
	root.Path, root.RawPath, root.RawQuery, root.Fragment = "", "", "", ""
	tries := [][2]string{{atPath.String(), resource}, {atRoot.String(), root.String()}}
	if metadata != "" {
		tries = append([][2]string{{metadata, resource}}, tries...)
	}
	var prm *oauthex.ProtectedResourceMetadata
	var errs []error
	for _, t := range tries {
		p, err := oauthex.GetProtectedResourceMetadata(ctx, t[0], t[1], client)
		if err == nil && p != nil && len(p.AuthorizationServers) > 0 {
			prm = p
			break
		}
		errs = append(errs, err)
	}
	as := &AuthServer{Resource: resource}
	issuer := ""
	switch {
	case prm != nil:
		issuer = prm.AuthorizationServers[0]
		as.Resource = cmp.Or(prm.Resource, resource)
		as.Scopes = prm.ScopesSupported
	case !legacy || metadata != "": // a server that names its metadata is held to it
		return nil, errors.New("no protected resource metadata (RFC 9728) names an authorization server for the server: " + errors.Join(errs...).Error())
	default:
		issuer = strings.TrimSuffix(root.String(), "/")
	}
	if scope != "" {
		as.Scopes = strings.Fields(scope)
	}
	asm, err := sdkauth.GetAuthServerMetadata(ctx, issuer, client)
	switch {
	case err != nil && prm != nil:
		return nil, err
	case asm == nil && prm == nil:
		asm = &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: issuer + "/authorize", TokenEndpoint: issuer + "/token", RegistrationEndpoint: issuer + "/register"}
	case asm == nil:
		return nil, errors.New("authorization server " + issuer + " publishes no metadata (RFC 8414)")
	}
	if t, err := url.Parse(asm.TokenEndpoint); err != nil || (t.Scheme != "https" && t.Scheme != "http") || t.Host == "" {
		return nil, errors.New("authorization server " + issuer + " names no absolute http(s) token_endpoint")
	}
	as.Meta = asm
	return as, nil
}

// SignInRequired is ListTools' error when the server answered 401 to a
// request without a credential and names an authorization server: the
// server needs a person's sign-in there (authorization code with PKCE), as
// a provider the host registers (internal/connect RegisterMCP).
type SignInRequired struct {
	Server string
	Auth   *AuthServer
}

func (e *SignInRequired) Error() string {
	return e.Server + " asks for a person's sign-in at " + e.Auth.Meta.Issuer
}
