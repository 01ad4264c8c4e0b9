package api

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/connect"
)

// OAuth 2.1 sign-in, the MCP authorization spec's way: rowcall is the
// protected resource (/mcp and the API) and its own authorization server.
// An access token is an ordinary capability token (rct_…), minted by the
// owner's consent in the console with the scope the owner chose; the token
// endpoint hands out a new secret for it, and refresh rotates that secret.
// docs/mcp.md says how a client connects; docs/security.md lists each
// defence and its test; RATIONALE.md says why the protocol is written here.

// Bounds of the authorization server.
const (
	oauthBody          = 16 << 10 // bytes of a registration or token request
	cimdBody           = 8 << 10  // bytes of a client ID metadata document
	registerPerMinute  = 10       // registrations per minute, for the whole database
	registerPerAddress = 3        // of those, from one address
	maxUnusedClients   = 200      // registered clients no consent has used yet
	unusedPerAddress   = 20       // of those, registered from one address
	maxPendingConsents = 200      // authorization requests waiting for consent
	pendingPerClient   = 10       // of those, for one client
	pendingPerAddress  = 10       // of those, from one address
	maxRedirectURIs    = 8
	maxURILength       = 1024 // a redirect_uri, logo_uri or client_id URL
	maxClientName      = 120
	maxState           = 1024 // bytes of an authorization request's state
	maxScope           = 1024 // bytes of its scope
	consentLife        = 10 * time.Minute
	codeLife           = time.Minute
	refreshGrace       = time.Minute // the refresh token just rotated is good again, and the access token it replaced still good
	metadataPath       = "/.well-known/oauth-protected-resource"
	authorizePath      = "/oauth/authorize"
	tokenPath          = "/oauth/token"
	registerPath       = "/oauth/register"
	revokePath         = "/oauth/revoke"
	codeChallengeBytes = 43 // an S256 challenge: 32 bytes, base64url without padding
)

// oauthBounds are the bounds the store keeps, counted in the statement that
// stores (sqlstore/oauth.go).
var oauthBounds = rowcall.OAuthBounds{
	RegisterPerMinute: registerPerMinute, RegisterPerMinutePerAddress: registerPerAddress,
	MaxUnused: maxUnusedClients, MaxUnusedPerAddress: unusedPerAddress,
	MaxPending: maxPendingConsents, PendingPerClient: pendingPerClient, PendingPerAddress: pendingPerAddress,
}

// remoteAddress is the address a request came from, for the bounds each
// source has its share of: the connection's peer (the worker's is Cloudflare's
// CF-Connecting-IP), or with TrustForwarded the last X-Forwarded-For entry,
// which the proxy in front appended. An IPv6 address counts as its /64, which
// one client holds whole.
func (h *Handler) remoteAddress(r *http.Request) string {
	ip, addr := h.remoteIP(r)
	if !ip.IsValid() {
		return addr
	}
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// remoteIP is the address a request came from (as remoteAddress says),
// whole and unmapped, and as it was written; the zero Addr when it is not
// an IP address.
func (h *Handler) remoteIP(r *http.Request) (netip.Addr, string) {
	addr := r.RemoteAddr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	if h.cfg.TrustForwarded {
		if f := lastValue(r.Header.Get("X-Forwarded-For")); f != "" {
			addr = f
		}
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Addr{}, addr
	}
	return ip.Unmap(), addr
}

func (h *Handler) oauthRoutes(m *router) {
	if h.cfg.OAuth == nil {
		return
	}
	m.HandleFunc("GET "+metadataPath, h.resourceMetadata)
	m.HandleFunc("GET "+metadataPath+"/mcp", h.resourceMetadata)
	m.HandleFunc("GET /.well-known/oauth-authorization-server", h.serverMetadata)
	m.HandleFunc("GET /.well-known/openid-configuration", h.serverMetadata)
	m.HandleFunc("GET "+authorizePath, h.authorize)
	m.HandleFuncUpTo("POST "+tokenPath, oauthBody, h.tokenGrant)
	m.HandleFuncUpTo("POST "+registerPath, oauthBody, h.register)
	m.HandleFuncUpTo("POST "+revokePath, oauthBody, h.revoke)
	m.HandleFunc("OPTIONS /.well-known/", preflight)
	m.HandleFunc("OPTIONS /oauth/", preflight)
	m.HandleFunc("GET /api/oauth/consent/{id}", h.may(rowcall.RightCall, h.consentGet))
	m.HandleFunc("POST /api/oauth/consent/{id}", h.may(rowcall.RightCall, h.consentApprove))
	m.HandleFunc("POST /api/oauth/consent/{id}/deny", h.may(rowcall.RightCall, h.consentDeny))
}

// cors lets a browser-based client (the MCP Inspector) read the answers:
// these endpoints read no cookie, so any origin may call them.
func cors(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Mcp-Protocol-Version")
}

func preflight(w http.ResponseWriter, r *http.Request) {
	cors(w)
	w.WriteHeader(http.StatusNoContent)
}

// resourceMetadata serves RFC 9728's document: at the root for the API,
// with /mcp appended for the MCP server.
func (h *Handler) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	base := h.baseURL(r)
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               base + strings.TrimPrefix(r.URL.Path, metadataPath),
		AuthorizationServers:   []string{base},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "rowcall",
	}).ServeHTTP(w, r)
}

// serverMetadata serves RFC 8414's document (and the same at OpenID's path,
// which some clients try first).
func (h *Handler) serverMetadata(w http.ResponseWriter, r *http.Request) {
	base := h.baseURL(r)
	cors(w)
	meta := ordered{
		{"issuer", base},
		{"authorization_endpoint", base + authorizePath},
		{"token_endpoint", base + tokenPath},
		{"registration_endpoint", base + registerPath},
		{"revocation_endpoint", base + revokePath},
		{"response_types_supported", []string{"code"}},
		{"response_modes_supported", []string{"query"}},
		{"grant_types_supported", []string{"authorization_code", "refresh_token"}},
		{"code_challenge_methods_supported", []string{"S256"}},
		{"token_endpoint_auth_methods_supported", []string{"none"}},
		{"revocation_endpoint_auth_methods_supported", []string{"none"}},
		{"client_id_metadata_document_supported", true},
		{"authorization_response_iss_parameter_supported", true},
	}
	if h.cfg.Connect != nil {
		// The keys of the subject tokens this host signs as their issuer
		// (internal/connect/exchange.go), for a provider's token exchange.
		meta = append(meta, kv{"jwks_uri", base + connect.JWKSPath})
	}
	writeJSON(w, http.StatusOK, meta)
}

// oauthError is an OAuth error answer (RFC 6749 §5.2): error and
// error_description, and how_to_fix as every rowcall error has.
func oauthError(w http.ResponseWriter, status int, code, description, fix string) {
	cors(w)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, ordered{{"error", code}, {"error_description", description}, {"how_to_fix", fix}})
}

// showError answers an authorization request that cannot be sent back to
// the client (its client or redirect_uri is not valid) with a page for the
// person, never a redirect: a redirect there would be an open redirect.
func showError(w http.ResponseWriter, status int, msg, fix string) {
	page(w, status, "Sign-in refused", `<h1>This sign-in request was refused</h1><p id="error">`+
		html.EscapeString(msg)+`</p><p>How to fix: `+html.EscapeString(fix)+`</p>`)
}

// client is what an authorization request's client_id names: a registered
// client, or the client ID metadata document at that https URL.
func (h *Handler) client(r *http.Request, id string) (rowcall.OAuthClient, error) {
	if !strings.HasPrefix(id, "https://") {
		return h.cfg.OAuth.OAuthClient(r.Context(), id)
	}
	return h.metadataDocument(r, id)
}

// metadataDocument fetches a client ID metadata document through the host's
// outbound client (the same policy as rows' calls), bounded in time and size.
func (h *Handler) metadataDocument(r *http.Request, id string) (rowcall.OAuthClient, error) {
	c := rowcall.OAuthClient{ID: id}
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil || strings.Contains(u.Path, "/.") {
		return c, invalid("client_id "+id+" is not a client ID metadata document URL", "a client named by URL uses https with a path, without a fragment, credentials or dot segments")
	}
	if h.cfg.Fetch == nil {
		return c, invalid("this host cannot fetch client ID metadata documents", "register the client (POST "+registerPath+")")
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, id, nil)
	req.Header.Set("Accept", "application/json")
	res, err := h.cfg.Fetch.Do(req)
	if err != nil {
		return c, invalid("cannot fetch the client's metadata document "+id+": "+err.Error(), "the client must serve its document at its client_id URL; the host's outbound policy (--allow-outbound) decides what it may reach")
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, cimdBody+1))
	if err != nil || res.StatusCode != http.StatusOK || len(body) > cimdBody {
		return c, invalid("the client's metadata document "+id+" answered "+res.Status+" (or more than "+strconv.Itoa(cimdBody)+" bytes)", "serve the document with 200 and at most "+strconv.Itoa(cimdBody)+" bytes")
	}
	var doc oauthex.ClientRegistrationMetadata
	var named struct {
		ClientID string `json:"client_id"`
	}
	if json.Unmarshal(body, &doc) != nil || json.Unmarshal(body, &named) != nil || named.ClientID != id {
		return c, invalid("the client's metadata document "+id+" is not JSON naming itself as client_id", `serve {"client_id":"`+id+`","client_name":…,"redirect_uris":[…]}`)
	}
	c.Name, c.LogoURI, c.RedirectURIs = doc.ClientName, doc.LogoURI, doc.RedirectURIs
	return c, checkClient(&c)
}

// checkClient bounds what a client says of itself (a registration or a
// metadata document).
func checkClient(c *rowcall.OAuthClient) error {
	if len(c.RedirectURIs) == 0 || len(c.RedirectURIs) > maxRedirectURIs {
		return invalid("redirect_uris must list 1 to "+strconv.Itoa(maxRedirectURIs)+" URIs", "name the URI the client receives the code at")
	}
	for _, u := range c.RedirectURIs {
		if err := checkRedirect(u); err != nil {
			return err
		}
	}
	if len(c.Name) > maxClientName {
		return &rowcall.Error{Code: rowcall.EInvalid, Message: "client_name is " + strconv.Itoa(len(c.Name)) + " bytes; at most " + strconv.Itoa(maxClientName),
			HowToFix: "name the client in at most " + strconv.Itoa(maxClientName) + " bytes", Extra: map[string]any{"field": "client_name"}}
	}
	if c.LogoURI != "" {
		if u, err := url.Parse(c.LogoURI); err != nil || u.Scheme != "https" || len(c.LogoURI) > maxURILength {
			c.LogoURI = "" // a logo is shown only from https
		}
	}
	return nil
}

// checkRedirect allows https, http to a loopback host (a client on this
// machine, which may then ask on any port: registered), and a private-use
// scheme (RFC 8252: reverse domain, e.g. com.example.app:/cb).
func checkRedirect(s string) error {
	u, err := url.Parse(s)
	bad := func(why string) error {
		return invalid("redirect_uri "+strconv.Quote(s)+" "+why, "use https://…, http://127.0.0.1:port/… or http://localhost:port/… for a local client, or a reverse-domain scheme (com.example.app:/callback)")
	}
	switch {
	case len(s) > maxURILength:
		return invalid("a redirect_uri is "+strconv.Itoa(len(s))+" bytes; at most "+strconv.Itoa(maxURILength), "register a shorter redirect URI")
	case err != nil || !u.IsAbs():
		return bad("is not an absolute URI")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return bad("has a fragment")
	case u.User != nil:
		return bad("carries credentials")
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http":
		if loopbackHost(u.Hostname()) {
			return nil
		}
		return bad("uses http to a host that is not loopback")
	case strings.Contains(u.Scheme, "."):
		return nil
	}
	return bad("uses a scheme a redirect may not use")
}

// registered reports whether redirect is one of uris: the same string, or,
// for an http loopback URI, the same but for the port (RFC 8252 §7.3: a
// native client listens on whatever port the system gives it). The host
// stays as registered: 127.0.0.1, [::1] or localhost, which RFC 8252 §8.3
// does not recommend but many clients use, and which browsers resolve to
// loopback only; path and query match exactly.
func registered(uris []string, redirect string) bool {
	if contains(uris, redirect) {
		return true
	}
	r, err := url.Parse(redirect)
	if err != nil || r.Scheme != "http" || !loopbackHost(r.Hostname()) || r.User != nil || strings.Contains(redirect, "#") {
		return false
	}
	if p := r.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p {
			return false
		}
	}
	for _, s := range uris {
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "http" || u.Hostname() != r.Hostname() {
			continue
		}
		u.Host = r.Host
		if u.String() == redirect {
			return true
		}
	}
	return false
}

func loopbackHost(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// authorize handles GET /oauth/authorize. Until the client and the
// redirect_uri are known good, errors are shown, not redirected; after,
// they go back to the client with state and iss (RFC 9207). A good request
// waits for consent in the console.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, redirect := q.Get("client_id"), q.Get("redirect_uri")
	if id == "" {
		showError(w, http.StatusBadRequest, "the request names no client_id", "start the sign-in from the client")
		return
	}
	if len(id) > maxURILength || len(redirect) > maxURILength {
		showError(w, http.StatusBadRequest, "client_id or redirect_uri is over "+strconv.Itoa(maxURILength)+" bytes", "start the sign-in from the client")
		return
	}
	c, err := h.client(r, id)
	if err != nil {
		var e *rowcall.Error
		if !errors.As(err, &e) {
			e = &rowcall.Error{Message: err.Error(), HowToFix: "try again"}
		}
		showError(w, http.StatusBadRequest, e.Message, e.HowToFix)
		return
	}
	if redirect == "" && len(c.RedirectURIs) == 1 {
		redirect = c.RedirectURIs[0]
	}
	if !registered(c.RedirectURIs, redirect) {
		showError(w, http.StatusBadRequest, "redirect_uri "+strconv.Quote(redirect)+" is not one the client "+id+" registered (the match is exact, except the port of an http loopback URI)",
			"start the sign-in from the client; it must send one of its registered redirect URIs exactly (for http://127.0.0.1, http://[::1] or http://localhost, on any port)")
		return
	}
	base := h.baseURL(r)
	back := func(code, description string) {
		v := url.Values{"error": {code}, "error_description": {description}, "iss": {base}}
		if s := q.Get("state"); s != "" && len(s) <= maxState {
			v.Set("state", s)
		}
		http.Redirect(w, r, withQuery(redirect, v), http.StatusFound)
	}
	resource := q.Get("resource")
	if resource == "" {
		resource = base + "/mcp"
	}
	switch {
	case q.Get("response_type") != "code":
		back("unsupported_response_type", "response_type must be code")
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != codeChallengeBytes:
		back("invalid_request", "PKCE is required: send code_challenge (43 characters) with code_challenge_method=S256")
	case len(q.Get("state")) > maxState:
		back("invalid_request", "state is "+strconv.Itoa(len(q.Get("state")))+" bytes; this server takes at most "+strconv.Itoa(maxState))
	case len(q.Get("scope")) > maxScope:
		back("invalid_request", "scope is "+strconv.Itoa(len(q.Get("scope")))+" bytes; this server takes at most "+strconv.Itoa(maxScope))
	case !h.ourResource(r, resource):
		back("invalid_target", "resource "+resource+" is not this server ("+base+"/mcp)")
	default:
		req := rowcall.OAuthRequest{ID: "ocr_" + randomID(24), ClientID: id, ClientName: c.Name, LogoURI: c.LogoURI, RedirectURI: redirect,
			CodeChallenge: q.Get("code_challenge"), State: q.Get("state"), Resource: resource, Scope: q.Get("scope"),
			ExpiresAt: time.Now().Add(consentLife).UTC().Format(rowcall.Timestamp), Remote: h.remoteAddress(r)}
		stored, err := h.cfg.OAuth.CreateOAuthRequest(r.Context(), &req, oauthBounds)
		if err != nil || !stored {
			w.Header().Set("Retry-After", "60")
			showError(w, http.StatusTooManyRequests, "too many sign-in requests wait for consent: this server holds at most "+strconv.Itoa(maxPendingConsents)+
				", "+strconv.Itoa(pendingPerClient)+" for one client and "+strconv.Itoa(pendingPerAddress)+" from one address",
				"answer or let expire the waiting requests (they last ten minutes), then start the sign-in again")
			return
		}
		http.Redirect(w, r, base+"/#/consent/"+req.ID, http.StatusFound)
	}
}

// ourResource reports whether an RFC 8707 resource names this server: the
// API's base or its /mcp.
func (h *Handler) ourResource(r *http.Request, resource string) bool {
	base := h.baseURL(r)
	resource = strings.TrimSuffix(resource, "/")
	return resource == base || resource == base+"/mcp"
}

func withQuery(uri string, v url.Values) string {
	sep := "?"
	if strings.Contains(uri, "?") {
		sep = "&"
	}
	return uri + sep + v.Encode()
}

// consentGet handles GET /api/oauth/consent/{id}: what the console shows.
func (h *Handler) consentGet(w http.ResponseWriter, r *http.Request, c Caller) {
	q, err := h.cfg.OAuth.OAuthRequest(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, q)
}

// consentApprove handles POST /api/oauth/consent/{id}: the body is a mint
// request (the scope the owner, or the signed-in person, chose; a person's
// consent names them and grants at most their own scope). It mints the capability token the
// client will hold and answers where to send the browser: the client's
// redirect_uri with a one-time code.
func (h *Handler) consentApprove(w http.ResponseWriter, r *http.Request, c Caller) {
	q, err := h.cfg.OAuth.OAuthRequest(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	m, err := readMint(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	m.Audience = "" // bound to this host (RFC 8707)
	t, err := h.tokenFrom(r, m)
	if err == nil {
		err = bindToPerson(c, &t) // a person grants at most what they may do
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !h.finish(w, r, q) {
		return
	}
	t.Client = q.ClientID
	if t.Name == "" {
		t.Name = q.ClientName
	}
	if _, err := h.storeToken(r.Context(), &t); err != nil { // the client's secret is made when it redeems the code
		writeError(w, r, err)
		return
	}
	code, sum := newSecret("")
	if err := h.cfg.OAuth.CreateOAuthCode(r.Context(), sum, rowcall.OAuthCode{TokenID: t.ID, ClientID: q.ClientID, RedirectURI: q.RedirectURI,
		CodeChallenge: q.CodeChallenge, Resource: q.Resource, ExpiresAt: time.Now().Add(codeLife).UTC().Format(rowcall.Timestamp)}); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"id", t.ID}, {"redirect", h.redirectTo(r, q, url.Values{"code": {code}})}})
}

// consentDeny handles POST /api/oauth/consent/{id}/deny.
func (h *Handler) consentDeny(w http.ResponseWriter, r *http.Request, c Caller) {
	q, err := h.cfg.OAuth.OAuthRequest(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if h.finish(w, r, q) {
		writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"redirect", h.redirectTo(r, q, url.Values{"error": {"access_denied"}, "error_description": {"the owner declined"}})}})
	}
}

// finish marks a consent answered: only one answer per request.
func (h *Handler) finish(w http.ResponseWriter, r *http.Request, q rowcall.OAuthRequest) bool {
	first, err := h.cfg.OAuth.FinishOAuthRequest(r.Context(), q.ID)
	if err == nil && !first {
		err = &rowcall.Error{Code: rowcall.ENotFound, Message: "this sign-in request was already answered", HowToFix: "start the sign-in again from the client"}
	}
	if err != nil {
		writeError(w, r, err)
	}
	return err == nil
}

// redirectTo is the authorization response's URL: the client's redirect_uri
// with v, its state and this server's iss (RFC 9207).
func (h *Handler) redirectTo(r *http.Request, q rowcall.OAuthRequest, v url.Values) string {
	v.Set("iss", h.baseURL(r))
	if q.State != "" {
		v.Set("state", q.State)
	}
	return withQuery(q.RedirectURI, v)
}

// tokenGrant handles POST /oauth/token: authorization_code (with the PKCE
// verifier) and refresh_token. Each hands out a new secret for the grant's
// capability token and a new refresh token; a code presented a second time
// revokes the token, and so does a code redeemed wrongly (it is spent by
// the attempt), or a refresh token replayed past its grace (refreshGrace).
func (h *Handler) tokenGrant(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, oauthBody)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form of at most "+strconv.Itoa(oauthBody)+" bytes", "send application/x-www-form-urlencoded parameters")
		return
	}
	f := r.PostForm
	client := f.Get("client_id")
	if client == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "client_id is required", "send the client_id the code was issued to")
		return
	}
	if res := f.Get("resource"); res != "" && !h.ourResource(r, res) {
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource "+res+" is not this server", "ask this server for a token for "+h.baseURL(r)+"/mcp")
		return
	}
	var grant rowcall.OAuthRefresh // what the new refresh token will be
	switch f.Get("grant_type") {
	case "authorization_code":
		code, first, err := h.cfg.OAuth.UseOAuthCode(r.Context(), hashHex(f.Get("code")))
		switch {
		case err != nil:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "no such authorization code", "start the sign-in again")
			return
		case !first:
			h.revokeWithConnections(r, code.TokenID)
			oauthError(w, http.StatusBadRequest, "invalid_grant", "this authorization code was already used; the token it issued is revoked", "start the sign-in again")
			return
		case code.ExpiresAt < time.Now().UTC().Format(rowcall.Timestamp):
			h.revokeWithConnections(r, code.TokenID)
			oauthError(w, http.StatusBadRequest, "invalid_grant", "this authorization code has expired", "redeem a code within a minute; start the sign-in again")
			return
		case code.ClientID != client || code.RedirectURI != f.Get("redirect_uri"):
			h.revokeWithConnections(r, code.TokenID)
			oauthError(w, http.StatusBadRequest, "invalid_grant", "client_id and redirect_uri must be those of the authorization request", "send the same client_id and redirect_uri as to "+authorizePath)
			return
		case !pkce(f.Get("code_verifier"), code.CodeChallenge):
			h.revokeWithConnections(r, code.TokenID)
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge (S256)", "send the verifier whose S256 challenge began the sign-in")
			return
		}
		grant = rowcall.OAuthRefresh{TokenID: code.TokenID, ClientID: client, Gen: 1}
	case "refresh_token":
		// The refresh token just rotated is good again for refreshGrace (a
		// client open in two windows refreshes twice with it); a used one
		// after that, an older one, or one from another client is a replay.
		ref, good, err := h.cfg.OAuth.UseRefresh(r.Context(), hashHex(f.Get("refresh_token")), client, refreshGrace)
		switch {
		case err != nil:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "no such refresh token", "sign in again")
			return
		case !good:
			h.revokeWithConnections(r, ref.TokenID)
			oauthError(w, http.StatusBadRequest, "invalid_grant", "this refresh token was already used (over a minute ago, or a newer one since); its token is revoked",
				"sign in again; a refresh token is good for one use, and again only within a minute while it is the latest used")
			return
		case ref.ClientID != client:
			oauthError(w, http.StatusBadRequest, "invalid_grant", "this refresh token was issued to another client", "send the client_id the token was issued to")
			return
		}
		grant = rowcall.OAuthRefresh{TokenID: ref.TokenID, ClientID: client, Gen: ref.Gen + 1}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token", "use the authorization code flow with PKCE")
		return
	}
	h.issue(w, r, grant)
}

// pkce checks an RFC 7636 verifier against an S256 challenge.
func pkce(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(oauth2.S256ChallengeFromVerifier(verifier)), []byte(challenge)) == 1
}

// issue gives the grant's capability token a new secret (the access token)
// and the grant a new refresh token, g. After a refresh the secret replaced
// stays good for refreshGrace (a client's other window still holds it); the
// secret a code replaces was never handed out.
func (h *Handler) issue(w http.ResponseWriter, r *http.Request, g rowcall.OAuthRefresh) {
	tokenID := g.TokenID
	t, err := h.store.Token(r.Context(), tokenID)
	if err != nil || t.State(h.disp.Clock()) != rowcall.TokenLive {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the token of this grant is revoked or expired", "sign in again")
		return
	}
	access, sum := newSecret(TokenPrefix)
	refresh, rsum := newSecret("rcr_")
	keep := refreshGrace
	if g.Gen == 1 {
		keep = 0
	}
	if err := h.cfg.OAuth.SetTokenSecret(r.Context(), tokenID, sum, keep); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the token of this grant is revoked", "sign in again")
		return
	}
	if err := h.cfg.OAuth.CreateRefresh(r.Context(), rsum, g); err != nil {
		writeError(w, r, err)
		return
	}
	out := ordered{{"access_token", access}, {"token_type", "Bearer"}, {"refresh_token", refresh}}
	if t.ExpiresAt != "" {
		if at, err := time.Parse(time.RFC3339Nano, t.ExpiresAt); err == nil {
			out = append(out, kv{"expires_in", int64(time.Until(at).Seconds())})
		}
	}
	cors(w)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
}

// register handles POST /oauth/register (RFC 7591): public clients only,
// bounded in size, rate and number; a client no consent uses is forgotten
// after a day.
func (h *Handler) register(w http.ResponseWriter, r *http.Request) {
	var m oauthex.ClientRegistrationMetadata
	body, err := io.ReadAll(io.LimitReader(r.Body, oauthBody+1))
	if err != nil || len(body) > oauthBody || json.Unmarshal(body, &m) != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body is not a JSON object of at most "+strconv.Itoa(oauthBody)+" bytes", "send the client's metadata (RFC 7591)")
		return
	}
	if m.TokenEndpointAuthMethod != "" && m.TokenEndpointAuthMethod != "none" {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "token_endpoint_auth_method must be none: this server registers public clients, which prove themselves with PKCE", "omit token_endpoint_auth_method or send none")
		return
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "grant type "+g+" is not offered", "use authorization_code and refresh_token")
			return
		}
	}
	c := rowcall.OAuthClient{ID: "oc_" + randomID(24), Name: m.ClientName, LogoURI: m.LogoURI, RedirectURIs: m.RedirectURIs, Remote: h.remoteAddress(r)}
	if err := checkClient(&c); err != nil {
		var e *rowcall.Error
		errors.As(err, &e)
		code := "invalid_redirect_uri"
		if e.Extra["field"] != nil {
			code = "invalid_client_metadata"
		}
		oauthError(w, http.StatusBadRequest, code, e.Message, e.HowToFix)
		return
	}
	ok, err := h.cfg.OAuth.RegisterClient(r.Context(), &c, oauthBounds)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !ok {
		w.Header().Set("Retry-After", "60")
		oauthError(w, http.StatusTooManyRequests, "too_many_registrations", "this server registers at most "+strconv.Itoa(registerPerMinute)+" clients a minute ("+strconv.Itoa(registerPerAddress)+
			" from one address) and keeps at most "+strconv.Itoa(maxUnusedClients)+" that no one has signed in with ("+strconv.Itoa(unusedPerAddress)+" registered from one address)",
			"retry in a minute; unused clients are forgotten after a day")
		return
	}
	cors(w)
	w.Header().Set("Cache-Control", "no-store")
	created, _ := time.Parse(rowcall.Timestamp, c.CreatedAt)
	writeJSON(w, http.StatusCreated, ordered{{"client_id", c.ID}, {"client_id_issued_at", created.Unix()}, {"client_name", c.Name},
		{"redirect_uris", c.RedirectURIs}, {"token_endpoint_auth_method", "none"},
		{"grant_types", []string{"authorization_code", "refresh_token"}}, {"response_types", []string{"code"}}})
}

// revoke handles POST /oauth/revoke (RFC 7009): an access or refresh token
// of the client revokes the grant's capability token. The answer is 200
// whatever the token was.
func (h *Handler) revoke(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, oauthBody)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form of at most "+strconv.Itoa(oauthBody)+" bytes", "send token and client_id as a form")
		return
	}
	secret, client := r.PostForm.Get("token"), r.PostForm.Get("client_id")
	if strings.HasPrefix(secret, TokenPrefix) {
		if t, err := h.store.TokenBySecret(r.Context(), hashHex(secret)); err == nil && t.Client != "" && t.Client == client {
			h.revokeWithConnections(r, t.ID)
		}
	} else if id, owner, err := h.cfg.OAuth.RefreshToken(r.Context(), hashHex(secret)); err == nil && owner == client {
		h.revokeWithConnections(r, id)
	}
	cors(w)
	writeJSON(w, http.StatusOK, ordered{})
}
