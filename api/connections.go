package api

import (
	"html"
	"io"
	"net/http"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/connect"
)

// connectBody is the most POST /connect reads: its form holds one
// invitation (the c of the link), a few hundred bytes.
const connectBody = 16 << 10

// connectionRoutes serves callers' connections to the operator's providers
// (docs/tokens.md#connections): the JSON API for the credential that holds
// them, and the pages a person opens to connect. None of them ever shows a
// connection's tokens.
func (h *Handler) connectionRoutes(m *router) {
	if h.cfg.Connect == nil {
		return
	}
	m.HandleFunc("GET /api/connections", h.holder(h.listConnections))
	m.HandleFunc("POST /api/connections/{provider}", h.holder(h.startConnection))
	m.HandleFunc("DELETE /api/connections/{provider}", h.holder(h.deleteConnection))
	m.HandleFunc("GET /connect", h.connectPage)
	m.HandleFuncUpTo("POST /connect", connectBody, h.connectGo)
	m.HandleFunc("GET "+connect.CallbackPath, h.connectCallback)
	m.HandleFunc("GET "+connect.JWKSPath, h.subjectKeys)
}

// subjectKeys handles GET /.well-known/jwks.json: the public keys of the
// subject tokens this host presents in token exchanges, which a provider
// reads to trust them (docs/tokens.md#token-exchange).
func (h *Handler) subjectKeys(w http.ResponseWriter, r *http.Request) {
	cors(w)
	w.Header().Set("Cache-Control", "max-age=300")
	writeJSON(w, http.StatusOK, h.cfg.Connect.JWKS())
}

// holder wraps a request about the caller's own connections: the owner, or a
// live capability token.
func (h *Handler) holder(next func(http.ResponseWriter, *http.Request, Caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := h.caller(r)
		if !c.Owner && (c.Token == nil || !h.usable(c.Token)) {
			h.unauthorized(w, r)
			return
		}
		next(w, r, c)
	}
}

// holderOf is whose connections c's requests are about: the token's id, or
// the owner's; the owner names another holder with ?holder=.
func holderOf(r *http.Request, c Caller) string {
	if c.Token != nil {
		return c.Token.ID
	}
	if hd := r.URL.Query().Get("holder"); hd != "" {
		return hd
	}
	return rowcall.OwnerHolder
}

// listConnections handles GET /api/connections: the caller's connections
// (the owner's: everyone's, or ?holder='s), never their tokens.
func (h *Handler) listConnections(w http.ResponseWriter, r *http.Request, c Caller) {
	holder := holderOf(r, c)
	if c.Owner && r.URL.Query().Get("holder") == "" {
		holder = ""
	}
	list, err := h.cfg.Connect.Store.ListConnections(r.Context(), holder)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"connections", list}})
}

// startConnection handles POST /api/connections/{provider}: the link a person
// opens to connect the caller's account at the provider.
func (h *Handler) startConnection(w http.ResponseWriter, r *http.Request, c Caller) {
	provider, ok := h.provider(w, r)
	if !ok {
		return
	}
	if h.cfg.Connect.Provider(r.Context(), provider).TokenExchange != nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: provider + " exchanges each caller's subject token for its access token: there is nothing to connect",
			HowToFix: "call the row: the host exchanges the token itself (docs/tokens.md#token-exchange)"})
		return
	}
	holder := rowcall.OwnerHolder
	if c.Token != nil {
		holder = c.Token.ID
	}
	writeJSON(w, http.StatusOK, ordered{{"provider", provider}, {"holder", holder}, {"connect_url", h.cfg.Connect.Link(r.Context(), holder, provider)}})
}

// deleteConnection handles DELETE /api/connections/{provider}: its holder,
// or the owner (?holder=tok_…), forgets the connection.
func (h *Handler) deleteConnection(w http.ResponseWriter, r *http.Request, c Caller) {
	provider, ok := h.provider(w, r)
	if !ok {
		return
	}
	holder := holderOf(r, c)
	found, err := h.cfg.Connect.Store.DeleteConnection(r.Context(), holder, provider)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !found {
		writeError(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: "no connection to " + provider + " for " + holder,
			HowToFix: "GET /api/connections lists the connections there are"})
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"holder", holder}, {"provider", provider}, {"revoked", true}})
}

func (h *Handler) provider(w http.ResponseWriter, r *http.Request) (string, bool) {
	p := r.PathValue("provider")
	if h.cfg.Connect.Provider(r.Context(), p) == nil {
		writeError(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: "no provider " + p + " on this host",
			HowToFix: "the operator lists providers in ROWCALL_CONNECTIONS, and importing an MCP server that needs a sign-in registers one; a row's auth names one as bearer:connection:NAME"})
		return "", false
	}
	return p, true
}

// connectPage handles GET /connect?c=…: the page that asks a person to
// connect their account at the provider for the holder the link was made for.
// Its form posts to "connect", relative to the page, so it stays under the
// base the page was served at (a tenant's /t/NAME).
func (h *Handler) connectPage(w http.ResponseWriter, r *http.Request) {
	c := r.URL.Query().Get("c")
	holder, provider, err := h.cfg.Connect.Invitation(r.Context(), c)
	if err != nil {
		showError(w, http.StatusBadRequest, err.Error(), "make the call again: its answer has a new link")
		return
	}
	page(w, http.StatusOK, "Connect "+provider, `<h1>Connect your `+html.EscapeString(provider)+` account</h1>`+
		`<p>Calls made with <b id="holder">`+html.EscapeString(holder)+`</b> will use your `+html.EscapeString(provider)+
		` account; no other caller can use it, and its holder or the owner can revoke it at any time.</p>`+
		`<form method="post" action="connect"><input type="hidden" name="c" value="`+html.EscapeString(c)+`">`+
		`<button id="connect" type="submit">Connect `+html.EscapeString(provider)+`</button></form>`)
}

// connectGo handles POST /connect: on to the provider's sign-in.
func (h *Handler) connectGo(w http.ResponseWriter, r *http.Request) {
	to, err := h.cfg.Connect.Begin(r.Context(), r.PostFormValue("c"))
	if err != nil {
		showError(w, http.StatusBadRequest, err.Error(), "make the call again: its answer has a new link")
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// connectCallback handles the provider's redirect back with a code.
func (h *Handler) connectCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		showError(w, http.StatusBadRequest, "the provider answered "+e+": "+q.Get("error_description"), "make the call again and connect from its new link")
		return
	}
	holder, provider, err := h.cfg.Connect.Finish(r.Context(), q)
	if err != nil {
		showError(w, http.StatusBadRequest, err.Error(), "make the call again and connect from its new link")
		return
	}
	page(w, http.StatusOK, "Connected", `<h1 id="connected">Connected</h1><p>Calls made with <b>`+html.EscapeString(holder)+
		`</b> now use your `+html.EscapeString(provider)+` account. You can close this page.</p>`)
}

// page answers a small HTML page that loads nothing.
func page(w http.ResponseWriter, status int, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; form-action 'self' https: http:; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	io.WriteString(w, `<!doctype html><meta charset="utf-8"><title>`+html.EscapeString(title)+` · rowcall</title>`+body)
}

// forgetConnections deletes every connection holder made.
func (h *Handler) forgetConnections(r *http.Request, holder string) error {
	list, err := h.cfg.Connect.Store.ListConnections(r.Context(), holder)
	for _, c := range list {
		if err == nil {
			_, err = h.cfg.Connect.Store.DeleteConnection(r.Context(), holder, c.Provider)
		}
	}
	return err
}
