package api

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/rowcall/rowcall"
)

// People: a person signed in through the organisation's OpenID provider
// carries a session cookie; the caller it resolves to names them, with the
// rights of their role (rowcall.Role) over the rows of their scope. Tokens a
// person mints, or consents to for an MCP client, name them and are
// narrowed to what they may do at each request (rowcall.Person.Narrow).
// docs/people.md is the reference.

// SessionCookie is the session cookie's name over plain http; over https it
// is SecureSessionCookie, whose __Host- prefix makes the browser accept it
// only when Secure, for this host alone and the whole path.
const (
	SessionCookie       = "rowcall_session"
	SecureSessionCookie = "__Host-rowcall_session"
	// PathSessionCookie is the session cookie over https when the host's
	// base has a path (a tenant's, /t/NAME): the cookie is for that path
	// alone, which a __Host- cookie cannot be.
	PathSessionCookie = "__Secure-rowcall_session"
)

// Session lifetimes: a session ends SessionIdle after its last request, and
// SessionMax after it began, whichever is first.
const (
	SessionIdle = time.Hour
	SessionMax  = 12 * time.Hour
)

// sessionSecret is the session cookie's value on r, or "".
func sessionSecret(r *http.Request) string {
	for _, name := range []string{SecureSessionCookie, PathSessionCookie, SessionCookie} {
		if c, err := r.Cookie(name); err == nil && c.Value != "" {
			return c.Value
		}
	}
	return ""
}

// personCaller is the caller a live session stands for, or ok false.
func (h *Handler) personCaller(r *http.Request) (Caller, bool) {
	secret := sessionSecret(r)
	if h.cfg.People == nil || secret == "" {
		return Caller{}, false
	}
	now := h.disp.Clock()
	_, p, err := h.cfg.People.Session(r.Context(), hashHex(secret), now.UTC().Format(rowcall.Timestamp), now.Add(SessionIdle).UTC().Format(rowcall.Timestamp))
	if err != nil || !p.Active() {
		return Caller{}, false
	}
	return personPrincipal(&p, true), true
}

// personPrincipal is p as a caller: the owner when their role is, else the
// token their session stands for (every row of their scope, their approve
// right; the gate checks their call right).
func personPrincipal(p *rowcall.Person, session bool) Caller {
	c := Caller{Person: p, Actor: "person:" + p.ID, Session: session}
	if p.Role == rowcall.RoleOwner {
		c.Owner = true
		return c
	}
	c.Token = &rowcall.Token{ID: p.ID, Name: p.Name, Categories: p.Categories, Audience: "*", RiskCeiling: rowcall.RiskHigh,
		Approve: p.Has(rowcall.RightApprove), Person: p.ID, CreatedAt: p.CreatedAt}
	return c
}

// tokenCaller resolves the person behind a token they minted: the token narrowed
// to what they may do now, or ok false when they are disabled or gone.
func (h *Handler) tokenCaller(ctx context.Context, t rowcall.Token) (Caller, bool) {
	c := Caller{Token: &t, Actor: "token:" + t.ID}
	if t.Person == "" {
		return c, true
	}
	if h.cfg.People == nil {
		return Caller{}, false
	}
	p, err := h.cfg.People.Person(ctx, t.Person)
	if err != nil || !p.Active() {
		return Caller{}, false
	}
	narrowed := p.Narrow(t)
	c.Token, c.Person = &narrowed, &p
	return c, true
}

// may wraps a handler that changes or reads what only the owner, or a
// signed-in person whose role holds right, may: a capability token (a
// person's too) never does, as before people. The request's context names
// the caller as the writer of whatever the handler writes to the directory
// (rowcall.WithWriter: each row version's written_by).
func (h *Handler) may(right rowcall.Right, next func(http.ResponseWriter, *http.Request, Caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := h.caller(r)
		r = r.WithContext(rowcall.WithWriter(r.Context(), c.Actor))
		switch {
		case c.Owner:
			next(w, r, c)
		case c.Session:
			if e := c.Person.Forbids(right); e != nil {
				writeError(w, r, e)
				return
			}
			next(w, r, c)
		case c.Token != nil:
			writeError(w, r, &rowcall.Error{Code: rowcall.EForbidden, Message: "a capability token cannot do this; only the owner key or a signed-in person whose role allows it can",
				HowToFix: "tokens invoke and read rows in their scope; changes to the directory and to tokens need the owner, or a person signed in at /login"})
		default:
			h.unauthorized(w, r)
		}
	}
}

// crossSite reports whether r is a state-changing request that a session
// cookie would authenticate and that another site may have sent: it names
// no other credential, and neither its Origin nor its fetch metadata says
// it came from this host's own pages. Such a request is refused before any
// handler reads it (ServeHTTP).
func (h *Handler) crossSite(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	if sessionSecret(r) == "" || r.Header.Get("Authorization") != "" || r.Header.Get("X-Terminal-Key") != "" {
		return false
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return r.Header.Get("Sec-Fetch-Site") != "same-origin"
	}
	o, err := url.Parse(origin)
	b, berr := url.Parse(h.baseURL(r))
	return err != nil || berr != nil || !strings.EqualFold(o.Scheme, b.Scheme) || !strings.EqualFold(o.Host, b.Host)
}

var errCrossSite = &rowcall.Error{Code: rowcall.ECrossSite, Status: http.StatusForbidden, Message: "a request that changes something, authenticated by the session cookie, must come from this host's own pages",
	HowToFix: "send it from the console, or from a script with Authorization: Bearer <token>; a page of another site cannot use your session"}

// me handles GET /api/me: who the caller is.
func (h *Handler) me(w http.ResponseWriter, r *http.Request) {
	c := h.caller(r)
	switch {
	case c.Person != nil:
		kind := "token"
		if c.Session {
			kind = "person"
		}
		answer := ordered{{"ok", true}, {"kind", kind}, {"person", c.Person}, {"rights", c.Person.Role.Rights()}}
		if !c.Session && c.Token != nil {
			answer = append(answer, kv{"token", c.Token})
		}
		writeJSON(w, http.StatusOK, answer)
	case c.Owner:
		writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"kind", "owner"}, {"rights", rowcall.RoleOwner.Rights()}})
	case c.Token != nil && h.usable(c.Token):
		writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"kind", "token"}, {"token", c.Token}})
	default:
		h.unauthorized(w, r)
	}
}

// listPeople handles GET /api/people.
func (h *Handler) listPeople(w http.ResponseWriter, r *http.Request, c Caller) {
	list, err := h.cfg.People.PeopleList(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"people", list}, {"roles", rowcall.Roles}})
}

// personPatch is the body of PATCH /api/people/{id}.
type personPatch struct {
	Role       *string  `json:"role"`
	Categories []string `json:"categories"`
	Disabled   *bool    `json:"disabled"`
}

// patchPerson handles PATCH /api/people/{id}: an admin sets a person's role
// (never their own, never above their own), their scope, or disables or
// enables them. Disabling ends everything of theirs in this request.
func (h *Handler) patchPerson(w http.ResponseWriter, r *http.Request, c Caller) {
	var body personPatch
	if err := readJSON(r, &body); err != nil {
		writeError(w, r, err)
		return
	}
	ctx := r.Context()
	p, err := h.cfg.People.Person(ctx, r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if c.Person != nil && c.Person.ID == p.ID {
		writeError(w, r, &rowcall.Error{Code: rowcall.EForbidden, Message: "nobody changes their own role, scope or state",
			HowToFix: "ask another admin"})
		return
	}
	if c.Person != nil && !c.Person.Role.Covers(p.Role) {
		writeError(w, r, &rowcall.Error{Code: rowcall.EForbidden, Message: "this person's role (" + string(p.Role) + ") holds rights yours does not",
			HowToFix: "ask someone whose role holds every right of theirs"})
		return
	}
	if body.Role != nil {
		role := rowcall.Role(*body.Role)
		if role != "" && !role.Valid() {
			writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "role " + *body.Role + " is not one of owner, admin, editor, approver, caller, viewer (or \"\" for none)",
				HowToFix: "docs/people.md lists each role's rights", Extra: map[string]any{"field": "role"}})
			return
		}
		if c.Person != nil && !c.Person.Role.Covers(role) {
			writeError(w, r, &rowcall.Error{Code: rowcall.EForbidden, Message: "you may not grant " + string(role) + ": it holds rights your role does not",
				HowToFix: "grant a role whose rights are all yours"})
			return
		}
		p.Role, p.RoleFrom = role, rowcall.RoleFromAdmin
	}
	if body.Categories != nil {
		if len(body.Categories) == 0 || slices.Contains(body.Categories, "") {
			writeError(w, r, &rowcall.Error{Code: rowcall.EInvalid, Message: "categories must name at least one category, or \"*\" for every row",
				Extra: map[string]any{"field": "categories"}})
			return
		}
		p.Categories = body.Categories
	}
	if body.Role != nil || body.Categories != nil {
		if p, err = h.cfg.People.SetPerson(ctx, p); err != nil {
			writeError(w, r, err)
			return
		}
	}
	if body.Disabled != nil {
		if *body.Disabled {
			err = h.cfg.People.DisablePerson(ctx, p.ID, h.disp.Clock().UTC().Format(rowcall.Timestamp))
		} else {
			err = h.cfg.People.EnablePerson(ctx, p.ID)
		}
		if err != nil {
			writeError(w, r, err)
			return
		}
		if p, err = h.cfg.People.Person(ctx, p.ID); err != nil {
			writeError(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, ordered{{"ok", true}, {"person", p}})
}

// StartSession signs p in: a new session, its cookie set on w. A cookie the
// browser already had is never reused (no session fixation): the secret is
// new at every sign-in.
func (h *Handler) StartSession(w http.ResponseWriter, r *http.Request, p rowcall.Person) error {
	b := make([]byte, 32)
	rand.Read(b)
	secret := base64.RawURLEncoding.EncodeToString(b)
	now := h.disp.Clock()
	if err := h.cfg.People.StartSession(r.Context(), rowcall.Session{ID: hashHex(secret), PersonID: p.ID,
		CreatedAt: now.UTC().Format(rowcall.Timestamp), ExpiresAt: now.Add(SessionMax).UTC().Format(rowcall.Timestamp),
		IdleUntil: now.Add(SessionIdle).UTC().Format(rowcall.Timestamp)}); err != nil {
		return err
	}
	http.SetCookie(w, h.sessionCookie(r, secret, int(SessionMax/time.Second)))
	return nil
}

// EndSession signs the request's session out and clears its cookie.
func (h *Handler) EndSession(w http.ResponseWriter, r *http.Request) {
	if secret := sessionSecret(r); secret != "" && h.cfg.People != nil {
		h.cfg.People.EndSession(r.Context(), hashHex(secret))
	}
	http.SetCookie(w, h.sessionCookie(r, "", -1))
}

// sessionCookie is the session cookie: HttpOnly, SameSite=Lax, for the
// host's base path (a tenant's cookie is not sent to another tenant's
// path), and on https Secure with the __Host- prefix (__Secure- under a
// path).
func (h *Handler) sessionCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	secure := strings.HasPrefix(h.baseURL(r), "https://")
	path := h.basePath(r) + "/"
	name := SessionCookie
	switch {
	case secure && path == "/":
		name = SecureSessionCookie
	case secure:
		name = PathSessionCookie
	}
	return &http.Cookie{Name: name, Value: value, Path: path, MaxAge: maxAge, HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
}

// basePath is the path of the host's base URL without its last slash: ""
// for a host at its root, /t/NAME for a tenant.
func (h *Handler) basePath(r *http.Request) string {
	u, err := url.Parse(h.baseURL(r))
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.Path, "/")
}

// errNoToken is the answer for a token the caller may not see: the same as
// for one that does not exist.
var errNoToken = &rowcall.Error{Code: rowcall.ENotFound, Message: "no such token", HowToFix: "GET /api/tokens lists the tokens"}

// ownToken reports whether t is one the caller's person minted or consented
// to.
func ownToken(c Caller, t *rowcall.Token) bool { return c.Person != nil && t.Person == c.Person.ID }

// bindToPerson makes t, minted by c, a token of c's person (none for the
// owner key): it names them, and it may not ask for more than they may do
// now — their call right, their scope, their approve right.
func bindToPerson(c Caller, t *rowcall.Token) error {
	p := c.Person
	if p == nil {
		return nil
	}
	if e := p.Forbids(rowcall.RightCall); e != nil {
		return e
	}
	if t.Approve && !p.Has(rowcall.RightApprove) {
		return p.Forbids(rowcall.RightApprove)
	}
	t.Person = p.ID
	if n := p.Narrow(*t); !sameSet(n.Categories, t.Categories) || !sameSet(n.Keys, t.Keys) {
		return &rowcall.Error{Code: rowcall.EForbidden, Message: "the token's scope reaches rows yours does not (your categories: " + strings.Join(p.Categories, ", ") + ")",
			HowToFix: "mint it with categories among yours, or ask an admin to widen your scope", Extra: map[string]any{"field": "categories"}}
	}
	return nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
