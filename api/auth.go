package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/rowcall/rowcall"
)

// Caller is who made a request: the owner, a capability token's holder, a
// signed-in person, or nobody.
type Caller = rowcall.Principal

// TokenPrefix starts every capability token's secret.
const TokenPrefix = "rct_"

// presented returns the credential on r: x-terminal-key (the seed's header) or
// Authorization: Bearer, and the actor name it implies for the owner.
func presented(r *http.Request) (secret, actor string) {
	if k := r.Header.Get("X-Terminal-Key"); k != "" {
		return k, "owner:terminal-key"
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), "owner:bearer"
	}
	return "", "anonymous"
}

// isOwnerKey reports whether secret, presented on r, is one of the owner
// keys valid now, from an address that may present it: any, or with
// OwnerKeyLoopbackOnly a loopback one (a key sent from elsewhere is no
// credential at all).
func (h *Handler) isOwnerKey(r *http.Request, secret string) bool {
	if h.cfg.OwnerKeys == nil || !OwnerKey(secret, h.cfg.OwnerKeys()) {
		return false
	}
	if h.cfg.OwnerKeyLoopbackOnly {
		ip, _ := h.remoteIP(r)
		return ip.IsLoopback()
	}
	return true
}

// Owner reports whether r presents an owner key this host accepts from
// where r came (for the host's own routes beside the API, /metrics).
func (h *Handler) Owner(r *http.Request) bool {
	secret, _ := presented(r)
	return h.isOwnerKey(r, secret)
}

// OwnerKey is the one owner-key check: whether secret is one of keys (two
// during a rotation), compared in constant time after hashing, so neither a
// key nor its length leaks. An empty secret is never an owner key.
func OwnerKey(secret string, keys []string) bool {
	if secret == "" {
		return false
	}
	sum := sha256.Sum256([]byte(secret))
	ok := 0
	for _, k := range keys {
		ks := sha256.Sum256([]byte(k))
		ok |= subtle.ConstantTimeCompare(sum[:], ks[:])
	}
	return ok == 1
}

// IsOwner reports whether r presents one of keys as the API accepts a
// credential (x-terminal-key, or Authorization: Bearer).
func IsOwner(r *http.Request, keys []string) bool {
	secret, _ := presented(r)
	return OwnerKey(secret, keys)
}

// caller identifies the request's caller: the owner key, a token (with the
// person who minted it, narrowed to what they may do now), or, when the
// request names no key or token, a person's session cookie. A token that is
// not found, or whose person is disabled or gone, is no credential at all; a
// revoked or expired one is still returned, so the gate can refuse it with
// its literal reason.
func (h *Handler) caller(r *http.Request) Caller {
	secret, actor := presented(r)
	if h.isOwnerKey(r, secret) {
		return Caller{Owner: true, Actor: actor}
	}
	if strings.HasPrefix(secret, TokenPrefix) {
		if t, err := h.store.TokenBySecret(r.Context(), hashHex(secret)); err == nil {
			if c, ok := h.tokenCaller(r.Context(), t); ok {
				return c
			}
		}
	}
	if secret == "" {
		if c, ok := h.personCaller(r); ok {
			return c
		}
	}
	return Caller{Actor: "anonymous"}
}

// usable reports whether a token may read now (rowcall.Token.State, by the
// dispatcher's clock).
func (h *Handler) usable(t *rowcall.Token) bool {
	return t.State(h.disp.Clock()) == rowcall.TokenLive
}

// ours reports whether a token was minted for this host's audience.
func (h *Handler) ours(t *rowcall.Token) bool {
	return t.Audience == "*" || t.Audience == h.disp.Audience
}

// reader wraps a directory read: the owner, a usable token (scoped by the
// handler), or anyone when public reads are on.
func (h *Handler) reader(next func(http.ResponseWriter, *http.Request, Caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := h.caller(r)
		if c.Person != nil && !c.Owner {
			if e := c.Person.Forbids(rowcall.RightRead); e != nil {
				writeError(w, r, e)
				return
			}
		}
		if c.Owner || (c.Token != nil && h.usable(c.Token)) || (c.Token == nil && h.cfg.PublicReads) {
			next(w, r, c)
			return
		}
		h.unauthorized(w, r)
	}
}

// invoker wraps a dispatch: the owner or any token holder (the gate decides).
func (h *Handler) invoker(next func(http.ResponseWriter, *http.Request, Caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := h.caller(r)
		if !c.Owner && c.Token == nil {
			h.unauthorized(w, r)
			return
		}
		next(w, r, c)
	}
}

// Unauthorized answers a request without a credential this host accepts:
// 401 {"error":"unauthorized","message","how_to_fix"} (the seed's code) with
// a WWW-Authenticate challenge. It is every 401 for a missing credential, and
// the same whatever was sent (nothing, a wrong key, a token this host does
// not know, a revoked or expired one on a read), so the answer never tells
// whether a key or token exists.
func Unauthorized(w http.ResponseWriter, r *http.Request) { challenge(w, r, "") }

// unauthorized is Unauthorized for the API and MCP: with OAuth on, its
// challenge names the protected resource metadata (RFC 9728), where a client
// learns how to sign in.
func (h *Handler) unauthorized(w http.ResponseWriter, r *http.Request) {
	meta := ""
	if h.cfg.OAuth != nil {
		meta = ` resource_metadata="` + h.baseURL(r) + metadataPath
		if r.URL.Path == "/mcp" {
			meta += "/mcp"
		}
		meta += `",`
	}
	challenge(w, r, meta)
}

// challenge writes the 401 with its WWW-Authenticate header; meta is the
// resource_metadata parameter and its comma, or "".
func challenge(w http.ResponseWriter, r *http.Request, meta string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="rowcall",`+meta+` error="invalid_token", error_description="send the owner key as x-terminal-key, or a key or capability token as Authorization: Bearer"`)
	writeError(w, r, errUnauthorized)
}

var errUnauthorized = &rowcall.Error{Code: rowcall.EUnauthorized,
	Message:  "the request carries no credential this host accepts",
	HowToFix: "send the owner key in the x-terminal-key header, or the owner key or a live capability token as Authorization: Bearer <secret>"}
