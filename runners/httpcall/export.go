package httpcall

import (
	"cmp"
	"context"
	"net/http"
	"net/url"

	"github.com/rowcall/rowcall"
)

// Credential is what ApplyAuth put on a request.
type Credential struct {
	Secrets []string // every value read from the environment, for redaction
	Headers []string // canonical names of the headers it set: leave them out of any plan
}

// ApplyAuth applies an auth column to req the way http rows do (see the
// package doc): bearer:, basic:, headers: and query: read their values from
// env at call time; a missing or empty variable applies nothing. fail is
// ERR:auth:unknown_prefix:<prefix> or bad_spec:<message> when the column
// cannot be used; an oauth: column needs a token request, which only the http
// runner makes, and gives ERR:auth:unsupported:oauth — …. Other runners that call an upstream
// with a row's credential (agent rows) use this so the auth column means the
// same thing on every row.
func ApplyAuth(req *http.Request, auth string, env rowcall.Env) (cred Credential, fail *rowcall.Failure) {
	spec, fail := parseAuth(auth)
	if fail != nil {
		return cred, fail
	}
	if spec.Kind == "oauth" {
		return cred, rowcall.Fail("auth", "unsupported", "oauth").
			Because("only http rows run the client-credentials grant; give this row a bearer:, basic:, headers: or query: credential")
	}
	if spec.Connection != "" {
		return cred, rowcall.Fail("auth", "unsupported", "connection").
			Because("only http and mcp rows use a caller's connection; give this row a bearer:, basic:, headers: or query: credential")
	}
	if env == nil {
		env = rowcall.EnvFunc(func(string) (string, bool) { return "", false })
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	c := &call{url: req.URL, headers: req.Header, credHeaders: map[string]bool{}}
	spec.apply(c, env)
	cred.Secrets = c.secrets
	for h := range c.credHeaders {
		cred.Headers = append(cred.Headers, h)
	}
	return cred, nil
}

// FetchMessage is the message for a transport failure, as http rows report
// it: the request URL (which may carry a query credential) dropped, and an
// outbound-policy refusal in its own words.
func FetchMessage(err error) string { return fetchMessage(err) }

// Authorized is a row's credential resolved for one upstream: what
// Runner.Authorize returns.
type Authorized struct {
	Header  http.Header // the headers the auth column sets
	URL     *url.URL    // the upstream's URL, with a query: credential added
	Secrets []string    // every value read or token obtained, for redaction
	// Discover is set when the column is oauth: without a token_url: the
	// token endpoint is the server's to name (TokenEndpoint). With no
	// endpoint given, no credential was applied.
	Discover bool
	forget   func()
}

// TokenEndpoint completes an oauth: column that names no token_url: the
// token endpoint an MCP server's metadata names (runners/mcpcall discovers
// it), and what its metadata says of how to use it.
type TokenEndpoint struct {
	URL       string // the authorization server's token_endpoint; "" when not discovered yet
	AuthStyle string // "basic" or "body", used when the column names none
	Scope     string // used when the column names none
	// Issuer is the authorization server's issuer: the audience of a
	// private_key client's assertion when the column names none.
	Issuer string
}

// Forget drops the OAuth token Authorize obtained (the upstream refused it
// with 401), so the next Authorize fetches a fresh one. It does nothing for
// other credentials.
func (a Authorized) Forget() {
	if a.forget != nil {
		a.forget()
	}
}

// Authorize resolves a row's auth column for a request to u the way http rows
// do (the package doc): bearer:, basic:, headers: and query: read their values
// from env at call time, and oauth: runs the client-credentials grant through
// the runner's token cache and client. It sends nothing to u. The failure
// (when out.Fail is set) is kind:key wrapping ERR:auth:…; out.Status is then
// the token endpoint's status. Runners that reach an upstream through another
// protocol with a row's credential (runners/mcpcall) use it, so the auth
// column means the same thing on every row. ep completes an oauth: column
// without token_url (Authorized.Discover).
func (r *Runner) Authorize(ctx context.Context, kind, key string, u *url.URL, auth string, env rowcall.Env, ep TokenEndpoint) (Authorized, rowcall.Output) {
	spec, fail := parseAuth(auth)
	if fail != nil {
		return Authorized{}, rowcall.Fail(kind, key).Wrapping(fail).Output()
	}
	if env == nil {
		env = rowcall.EnvFunc(func(string) (string, bool) { return "", false })
	}
	cu := *u
	c := &call{url: &cu, headers: http.Header{}, credHeaders: map[string]bool{}}
	if fail := spec.connect(ctx, c, kind, key); fail != nil {
		return Authorized{}, fail.Output()
	}
	spec.apply(c, env)
	discover := c.oauth != nil && c.oauth.TokenURL == ""
	if discover {
		if ep.URL == "" {
			return Authorized{Header: c.headers, URL: c.url, Secrets: c.secrets, Discover: true}, rowcall.Output{Secrets: c.secrets}
		}
		c.oauth.TokenURL = ep.URL
		c.oauth.AuthStyle = cmp.Or(c.oauth.AuthStyle, ep.AuthStyle)
		c.oauth.Scope = cmp.Or(c.oauth.Scope, ep.Scope)
		c.oauth.issuer = ep.Issuer
	}
	tctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	tokenKey, out := r.token(ctx, tctx, kind, key, c)
	if out.Failed() {
		return Authorized{}, out
	}
	a := Authorized{Header: c.headers, URL: c.url, Secrets: c.secrets, Discover: discover}
	if tokenKey != "" {
		a.forget = func() { r.tokens.drop(tokenKey) }
	}
	return a, out
}
