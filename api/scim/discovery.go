package scim

import (
	"net/http"
	"strings"

	"github.com/rowcall/rowcall"
)

// The discovery documents (RFC 7644 section 4): what this service
// supports, its one resource type and the attributes of its User schema.
// They say only what rowcall keeps; a provider reads them to learn it.

// config handles GET /scim/v2/ServiceProviderConfig.
func (s *Service) config(w http.ResponseWriter, r *http.Request) {
	supported := func(b bool) map[string]any { return map[string]any{"supported": b} }
	write(w, http.StatusOK, map[string]any{
		"schemas":        []string{SchemaConfig},
		"patch":          supported(true),
		"bulk":           map[string]any{"supported": false, "maxOperations": 0, "maxPayloadSize": 0},
		"filter":         map[string]any{"supported": true, "maxResults": MaxResults},
		"changePassword": supported(false),
		"sort":           supported(false),
		"etag":           supported(false),
		"authenticationSchemes": []map[string]any{{"type": "oauthbearertoken", "name": "Bearer token", "primary": true,
			"description": "the host's ROWCALL_SCIM_TOKEN, sent as Authorization: Bearer"}},
		"meta": Meta{ResourceType: "ServiceProviderConfig", Location: s.Base(r) + Path + "/ServiceProviderConfig"},
	})
}

// userType is the User resource type (RFC 7643 section 6).
func (s *Service) userType(r *http.Request) map[string]any {
	return map[string]any{"schemas": []string{SchemaResourceType}, "id": "User", "name": "User", "endpoint": "/Users",
		"description": "A person of the organisation, bound to the OpenID provider's issuer and subject (externalId)",
		"schema":      SchemaUser, "meta": Meta{ResourceType: "ResourceType", Location: s.Base(r) + Path + "/ResourceTypes/User"}}
}

// resourceTypes handles GET /scim/v2/ResourceTypes.
func (s *Service) resourceTypes(w http.ResponseWriter, r *http.Request) {
	write(w, http.StatusOK, listOf(1, 1, []any{s.userType(r)}))
}

// resourceType handles GET /scim/v2/ResourceTypes/{id}.
func (s *Service) resourceType(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("id") != "User" {
		s.Fail(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: "no resource type " + r.PathValue("id"), HowToFix: "this host serves the User resource type only"})
		return
	}
	write(w, http.StatusOK, s.userType(r))
}

// attribute is one attribute's definition (RFC 7643 section 7).
func attribute(name, typ, mutability, uniqueness, description string, required bool, sub ...map[string]any) map[string]any {
	a := map[string]any{"name": name, "type": typ, "multiValued": false, "description": description, "required": required,
		"caseExact": false, "mutability": mutability, "returned": "default", "uniqueness": uniqueness}
	if len(sub) > 0 {
		a["subAttributes"] = sub
	}
	return a
}

// userSchema is the User schema as rowcall keeps it.
func (s *Service) userSchema(r *http.Request) map[string]any {
	rw := "readWrite"
	emails := attribute("emails", "complex", rw, "none", "The person's email; rowcall keeps one, the primary or work one", false,
		attribute("value", "string", rw, "none", "The email address", false),
		attribute("type", "string", rw, "none", "work", false),
		attribute("primary", "boolean", rw, "none", "Whether it is the primary email", false))
	emails["multiValued"] = true
	return map[string]any{"schemas": []string{SchemaSchema}, "id": SchemaUser, "name": "User", "description": "A person of the organisation",
		"attributes": []map[string]any{
			attribute("userName", "string", rw, "server", "The person's unique name at the provider; a filter userName eq also finds a person signed in without one by their email", true),
			attribute("name", "complex", rw, "none", "The person's name; rowcall keeps one, formatted", false,
				attribute("formatted", "string", rw, "none", "The whole name", false),
				attribute("givenName", "string", rw, "none", "The given name, joined with the family name into the name of a person who has none yet", false),
				attribute("familyName", "string", rw, "none", "The family name, joined with the given name into the name of a person who has none yet", false)),
			attribute("displayName", "string", rw, "none", "The name shown; rowcall keeps it as the person's name", false),
			emails,
			attribute("active", "boolean", rw, "none", "false ends every session, token, OAuth grant, connection and pending approval of the person at once", false),
		},
		"meta": Meta{ResourceType: "Schema", Location: s.Base(r) + Path + "/Schemas/" + SchemaUser}}
}

// schemas handles GET /scim/v2/Schemas.
func (s *Service) schemas(w http.ResponseWriter, r *http.Request) {
	write(w, http.StatusOK, listOf(1, 1, []any{s.userSchema(r)}))
}

// schema handles GET /scim/v2/Schemas/{id}.
func (s *Service) schema(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.PathValue("id"), SchemaUser) {
		s.Fail(w, r, &rowcall.Error{Code: rowcall.ENotFound, Message: "no schema " + r.PathValue("id"), HowToFix: "this host serves " + SchemaUser + " only"})
		return
	}
	write(w, http.StatusOK, s.userSchema(r))
}
