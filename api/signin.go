package api

import (
	"cmp"
	"context"
	"crypto/subtle"
	"html"
	"net/http"
	"net/url"
	"strings"

	"github.com/rowcall/rowcall"
)

// SignIn is the organisation's OpenID provider, as the sign-in routes use
// it (internal/signin implements it with go-oidc and golang.org/x/oauth2):
// the authorization code flow with PKCE and a nonce, the ID token verified
// against the provider's keys.
type SignIn interface {
	// Name is the provider's name, for the console's "Sign in with …".
	Name() string
	// Begin starts a sign-in that returns to callback: the provider's
	// authorization URL, and the Login to keep until the callback (its
	// State is the plain state sent to the provider; the caller stores
	// only its hash).
	Begin(ctx context.Context, callback string) (authURL string, l rowcall.Login, err error)
	// Finish ends it: q is the callback's query; it checks the response's
	// iss (RFC 9207) when sent, redeems the code with l's verifier, and
	// verifies the ID token (signature, issuer, audience, expiry, l's
	// nonce). An error is an *rowcall.Error a person can act on.
	Finish(ctx context.Context, callback string, l rowcall.Login, q url.Values) (rowcall.Claims, error)
	// Role is the role the operator maps groups to ("" for none).
	Role(groups []string) rowcall.Role
}

func (h *Handler) signInRoutes(m *router) {
	m.HandleFunc("GET /login", h.login)
	m.HandleFunc("GET /login/callback", h.loginCallback)
	m.HandleFunc("POST /logout", h.logout)
	m.HandleFunc("GET /api/signin", h.signInInfo)
}

// signInInfo handles GET /api/signin: the provider the console offers.
func (h *Handler) signInInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"provider", h.cfg.SignIn.Name()}, {"login_url", h.baseURL(r) + "/login"}})
}

// returnPath is where a sign-in lands: a path on this host (never another
// site: "//evil" and "/\evil" are refused), "/" by default.
func returnPath(s string) string {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") || strings.ContainsAny(s, "\r\n") {
		return "/"
	}
	return s
}

// LoginCookie holds, from GET /login to its callback, the state of the
// sign-in this browser began (LoginCookie over plain http, SecureLoginCookie
// over https): a callback whose state is not this browser's is refused, so a
// sign-in someone else began cannot be finished in your browser (login
// cross-site request forgery, RFC 6749 §10.12).
const (
	LoginCookie       = "rowcall_login"
	SecureLoginCookie = "__Host-rowcall_login"
	// PathLoginCookie is the login cookie over https when the host's base
	// has a path (a tenant's): __Host- cookies must be for the whole site.
	PathLoginCookie = "__Secure-rowcall_login"
)

// loginCookie is the login cookie holding state (maxAge < 0 clears it).
func (h *Handler) loginCookie(r *http.Request, state string, maxAge int) *http.Cookie {
	c := h.sessionCookie(r, state, maxAge)
	switch c.Name {
	case SessionCookie:
		c.Name = LoginCookie
	case SecureSessionCookie:
		c.Name = SecureLoginCookie
	default:
		c.Name = PathLoginCookie
	}
	return c
}

// loginState is the login cookie's state on r, or "".
func loginState(r *http.Request) string {
	for _, name := range []string{SecureLoginCookie, PathLoginCookie, LoginCookie} {
		if c, err := r.Cookie(name); err == nil && c.Value != "" {
			return c.Value
		}
	}
	return ""
}

// login handles GET /login: the browser goes to the provider, holding the
// sign-in's state in the login cookie.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	authURL, l, err := h.cfg.SignIn.Begin(r.Context(), h.baseURL(r)+"/login/callback")
	if err != nil {
		signInRefused(w, err)
		return
	}
	l.ReturnTo = returnPath(r.URL.Query().Get("return_to"))
	l.CreatedAt = h.disp.Clock().UTC().Format(rowcall.Timestamp)
	state := l.State
	l.State = hashHex(state)
	if err := h.cfg.People.PutLogin(r.Context(), l); err != nil {
		signInRefused(w, err)
		return
	}
	http.SetCookie(w, h.loginCookie(r, state, loginCookieAge))
	http.Redirect(w, r, authURL, http.StatusFound)
}

// loginCookieAge is how long the login cookie lives, in seconds: as long
// as a sign-in begun may be finished (sqlstore.LoginTTL).
const loginCookieAge = 600

// loginCallback handles GET /login/callback: the state must be this
// browser's and is taken once, the provider's answer verified, the person
// found or created, and a new session begun.
func (h *Handler) loginCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	http.SetCookie(w, h.loginCookie(r, "", -1))
	if e := q.Get("error"); e != "" {
		signInRefused(w, signInError("denied", "the provider refused the sign-in: "+e+" "+q.Get("error_description"), "sign in again at /login"))
		return
	}
	state := q.Get("state")
	if mine := loginState(r); state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(mine)) != 1 {
		signInRefused(w, signInError("state", "this sign-in was not begun in this browser (or its cookie expired)", "start again at /login, in the browser you sign in with"))
		return
	}
	l, err := h.cfg.People.TakeLogin(r.Context(), hashHex(state))
	if err != nil {
		signInRefused(w, signInError("state", "this sign-in is unknown, used or expired", "start again at /login"))
		return
	}
	claims, err := h.cfg.SignIn.Finish(r.Context(), h.baseURL(r)+"/login/callback", l, q)
	if err != nil {
		signInRefused(w, err)
		return
	}
	p, err := h.cfg.People.SignedIn(r.Context(), claims, h.cfg.SignIn.Role(claims.Groups), h.disp.Clock().UTC().Format(rowcall.Timestamp))
	if err != nil {
		signInRefused(w, err)
		return
	}
	if !p.Active() {
		signInRefused(w, signInError("disabled", "your access to this host was ended at "+p.DisabledAt, "ask an admin of this host"))
		return
	}
	if err := h.StartSession(w, r, p); err != nil {
		signInRefused(w, err)
		return
	}
	http.Redirect(w, r, h.basePath(r)+l.ReturnTo, http.StatusFound) // ReturnTo is a path on this host's base (a tenant's is under /t/NAME)
}

// signInError is a sign-in refused for reason (rowcall.ESignInFailed).
func signInError(reason, msg, fix string) *rowcall.Error {
	return &rowcall.Error{Code: rowcall.ESignInFailed, Args: []string{reason}, Status: http.StatusForbidden, Message: msg, HowToFix: fix}
}

// signInRefused shows a person why their sign-in did not end in a session:
// the message, how to fix it, and the stable code (id="code").
func signInRefused(w http.ResponseWriter, err error) {
	e, ok := err.(*rowcall.Error)
	if !ok {
		e = &rowcall.Error{Code: rowcall.EInternal, Status: http.StatusInternalServerError, Message: err.Error(), HowToFix: "try again at /login"}
	}
	page(w, cmp.Or(e.Status, http.StatusForbidden), "Sign-in refused", `<h1>This sign-in was refused</h1><p id="error">`+html.EscapeString(e.Message)+
		`</p><p>How to fix: `+html.EscapeString(e.HowToFix)+`</p><p>Code: <code id="code">`+html.EscapeString(e.Reason())+`</code></p>`)
}

// logout handles POST /logout.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	h.EndSession(w, r)
	writeJSON(w, http.StatusOK, ordered{{"ok", true}})
}
