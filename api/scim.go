package api

import (
	"net/http"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api/scim"
)

// scimRoutes serves SCIM 2.0 provisioning (package scim) under /scim/v2,
// to the identity provider's client alone: every route takes the SCIM
// token, and only it, and reads at most scim.MaxBody. Every refusal there,
// the API's own included (a 401, a 413), is a SCIM Error (writeError).
func (h *Handler) scimRoutes(m *router) {
	s := &scim.Service{People: h.cfg.People, Issuer: h.cfg.SCIMIssuer, Now: h.disp.Clock, Base: h.baseURL, Fail: writeError}
	for _, rt := range s.Routes() {
		m.HandleFuncUpTo(rt.Pattern, scim.MaxBody, h.scimAuth(rt.Handler))
	}
}

// scimAuth lets through a request whose Authorization: Bearer is the SCIM
// token, compared in constant time as the owner key is (OwnerKey). The
// owner key is not the SCIM token, nor is any other credential.
func (h *Handler) scimAuth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		secret := ""
		if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
			secret = strings.TrimSpace(a[7:])
		}
		if !OwnerKey(secret, []string{h.cfg.SCIMToken}) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="rowcall SCIM"`)
			writeError(w, r, errSCIMUnauthorized)
			return
		}
		next(w, r)
	}
}

var errSCIMUnauthorized = &rowcall.Error{Code: rowcall.EUnauthorized, Message: "the request does not carry this host's SCIM token",
	HowToFix: "send the host's ROWCALL_SCIM_TOKEN as Authorization: Bearer <token> (in Okta and Microsoft Entra ID: the provisioning's API token or secret token)"}
