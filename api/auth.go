package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/rowcall/rowcall"
)

// Caller is who made a request.
type Caller struct {
	Owner bool   // presented an owner key
	Actor string // recorded on receipts, e.g. "owner:terminal-key"
}

// presented returns the credential on r: x-terminal-key (the seed's header) or
// Authorization: Bearer, and the actor name it implies.
func presented(r *http.Request) (secret, actor string) {
	if k := r.Header.Get("X-Terminal-Key"); k != "" {
		return k, "owner:terminal-key"
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), "owner:bearer"
	}
	return "", "anonymous"
}

// isOwnerKey compares secret with every owner key in constant time (hashing
// first so length does not leak either).
func (h *Handler) isOwnerKey(secret string) bool {
	if secret == "" {
		return false
	}
	sum := sha256.Sum256([]byte(secret))
	ok := 0
	for _, k := range h.cfg.OwnerKeys {
		ks := sha256.Sum256([]byte(k))
		ok |= subtle.ConstantTimeCompare(sum[:], ks[:])
	}
	return ok == 1
}

// caller identifies the request's caller.
func (h *Handler) caller(r *http.Request) Caller {
	secret, actor := presented(r)
	if h.isOwnerKey(secret) {
		return Caller{Owner: true, Actor: actor}
	}
	return Caller{Actor: "anonymous"}
}

var errUnauthorized = &rowcall.Error{Code: rowcall.EUnauthorized}

// owner wraps a handler that only the owner may call.
func (h *Handler) owner(next func(http.ResponseWriter, *http.Request, Caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := h.caller(r)
		if !c.Owner {
			unauthorized(w, r)
			return
		}
		next(w, r, c)
	}
}

// reader wraps a directory read: the owner, or anyone when public reads are on.
func (h *Handler) reader(next func(http.ResponseWriter, *http.Request, Caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := h.caller(r)
		if !c.Owner && !h.cfg.PublicReads {
			unauthorized(w, r)
			return
		}
		next(w, r, c)
	}
}

// unauthorized answers exactly as the seed prints: {"error":"unauthorized"}, 401.
func unauthorized(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="rowcall", error="invalid_token", error_description="send the owner key as x-terminal-key or Authorization: Bearer"`)
	writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized"})
}
