package api

import (
	"context"
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

// login handles GET /login: the browser goes to the provider.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	authURL, l, err := h.cfg.SignIn.Begin(r.Context(), h.baseURL(r)+"/login/callback")
	if err != nil {
		showError(w, http.StatusBadGateway, "the sign-in could not start: "+err.Error(), "try again; if it persists, the operator checks ROWCALL_OIDC_ISSUER")
		return
	}
	l.ReturnTo = returnPath(r.URL.Query().Get("return_to"))
	l.CreatedAt = h.disp.Clock().UTC().Format(rowcall.Timestamp)
	state := l.State
	l.State = hashHex(state)
	if err := h.cfg.People.PutLogin(r.Context(), l); err != nil {
		showError(w, http.StatusInternalServerError, "the sign-in could not be stored: "+err.Error(), "try again")
		return
	}
	http.Redirect(w, r, authURL, http.StatusFound)
}

// loginCallback handles GET /login/callback: the state is taken once, the
// provider's answer verified, the person found or created, and a new
// session begun.
func (h *Handler) loginCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		showError(w, http.StatusForbidden, "the provider refused the sign-in: "+e+" "+q.Get("error_description"), "sign in again at /login")
		return
	}
	l, err := h.cfg.People.TakeLogin(r.Context(), hashHex(q.Get("state")))
	if err != nil {
		showError(w, http.StatusBadRequest, "this sign-in is unknown, used or expired", "start again at /login")
		return
	}
	claims, err := h.cfg.SignIn.Finish(r.Context(), h.baseURL(r)+"/login/callback", l, q)
	if err != nil {
		showError(w, http.StatusForbidden, "the sign-in failed: "+err.Error(), "start again at /login")
		return
	}
	p, err := h.cfg.People.SignedIn(r.Context(), claims, h.cfg.SignIn.Role(claims.Groups), h.disp.Clock().UTC().Format(rowcall.Timestamp))
	if err != nil {
		showError(w, http.StatusInternalServerError, "the person could not be stored: "+err.Error(), "try again")
		return
	}
	if !p.Active() {
		showError(w, http.StatusForbidden, "your access to this host was ended at "+p.DisabledAt, "ask an admin of this host")
		return
	}
	if err := h.StartSession(w, r, p); err != nil {
		showError(w, http.StatusInternalServerError, "the session could not be stored: "+err.Error(), "try again")
		return
	}
	http.Redirect(w, r, l.ReturnTo, http.StatusFound)
}

// logout handles POST /logout.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	h.EndSession(w, r)
	writeJSON(w, http.StatusOK, ordered{{"ok", true}})
}
