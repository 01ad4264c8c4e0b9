package scim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall"
)

// The schema and message URNs (RFC 7643 section 8.7, RFC 7644 section 3).
const (
	SchemaUser         = "urn:ietf:params:scim:schemas:core:2.0:User"
	SchemaEnterprise   = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	SchemaListResponse = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	SchemaPatchOp      = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	SchemaError        = "urn:ietf:params:scim:api:messages:2.0:Error"
	SchemaConfig       = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"
	SchemaResourceType = "urn:ietf:params:scim:schemas:core:2.0:ResourceType"
	SchemaSchema       = "urn:ietf:params:scim:schemas:core:2.0:Schema"
)

// ContentType is every SCIM answer's Content-Type (RFC 7644 section 8.1).
const ContentType = "application/scim+json"

// The SCIM error types this service answers with (RFC 7644 section 3.12).
const (
	TypeInvalidFilter = "invalidFilter"
	TypeInvalidSyntax = "invalidSyntax"
	TypeInvalidPath   = "invalidPath"
	TypeInvalidValue  = "invalidValue"
	TypeMutability    = "mutability"
	TypeNoTarget      = "noTarget"
	TypeUniqueness    = "uniqueness"
)

// The stable codes of SCIM's refusals; each error also carries its SCIM
// type (scimType) and HTTP status.
const (
	CodeInvalidFilter  rowcall.Code = "scim_invalid_filter"
	CodeInvalidSyntax  rowcall.Code = "scim_invalid_syntax"
	CodeInvalidPath    rowcall.Code = "scim_invalid_path"
	CodeInvalidValue   rowcall.Code = "scim_invalid_value"
	CodeMutability     rowcall.Code = "scim_mutability"
	CodeNoTarget       rowcall.Code = "scim_no_target"
	CodeNoExternalID   rowcall.Code = "scim_external_id_required"
	CodeNoIssuer       rowcall.Code = "scim_no_issuer"
	CodeUserNameExists rowcall.Code = "scim_user_name_exists"
)

// fail is a SCIM refusal: a *rowcall.Error with its stable code, status and
// SCIM type.
func fail(code rowcall.Code, status int, scimType, message, howToFix string) *rowcall.Error {
	e := &rowcall.Error{Code: code, Status: status, Message: message, HowToFix: howToFix}
	if scimType != "" {
		e.Extra = map[string]any{"scimType": scimType}
	}
	return e
}

// scimTypes are the SCIM types of codes that do not name theirs.
var scimTypes = map[rowcall.Code]string{
	rowcall.EBadJSON:  TypeInvalidSyntax,
	rowcall.EConflict: TypeUniqueness,
}

// WriteError writes e, whose HTTP status is status, as a SCIM Error
// (RFC 7644 section 3.12): {"schemas":[…Error],"status":"404",
// "scimType":…,"detail":…}, the detail being e's message and how to fix it.
func WriteError(w http.ResponseWriter, e *rowcall.Error, status int) {
	scimType, _ := e.Extra["scimType"].(string)
	if scimType == "" {
		scimType = scimTypes[e.Code]
	}
	detail := e.Message
	if detail == "" {
		detail = e.Reason()
	}
	if e.HowToFix != "" {
		detail += " — " + e.HowToFix
	}
	write(w, status, errorBody{Schemas: []string{SchemaError}, Status: strconv.Itoa(status), ScimType: scimType, Detail: detail})
}

type errorBody struct {
	Schemas  []string `json:"schemas"`
	Status   string   `json:"status"`
	ScimType string   `json:"scimType,omitempty"`
	Detail   string   `json:"detail"`
}

// write writes v as SCIM JSON with status.
func write(w http.ResponseWriter, status int, v any) {
	w.Header()["Content-Type"] = []string{ContentType}
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// User is a person as a SCIM User resource (RFC 7643 section 4.1): id is
// the person's per_… id, externalId their subject at the provider.
type User struct {
	Schemas     []string `json:"schemas"`
	ID          string   `json:"id"`
	ExternalID  string   `json:"externalId,omitempty"`
	UserName    string   `json:"userName"`
	Name        *Name    `json:"name,omitempty"`
	DisplayName string   `json:"displayName,omitempty"`
	Emails      []Email  `json:"emails,omitempty"`
	Active      bool     `json:"active"`
	Meta        Meta     `json:"meta"`
}

// Name is a User's name; rowcall keeps one name, formatted.
type Name struct {
	Formatted  string `json:"formatted,omitempty"`
	GivenName  string `json:"givenName,omitempty"`
	FamilyName string `json:"familyName,omitempty"`
}

// Email is one of a User's emails; rowcall keeps one, primary.
type Email struct {
	Value   string `json:"value"`
	Type    string `json:"type,omitempty"`
	Primary bool   `json:"primary,omitempty"`
}

// Meta is a resource's metadata (RFC 7643 section 3.1).
type Meta struct {
	ResourceType string `json:"resourceType"`
	Created      string `json:"created,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	Location     string `json:"location"`
}

// userOf is p as a User, located under base (the API's base URL). Its
// userName is the person's user name, else their email, else their subject:
// SCIM requires one. lastModified is the latest of what rowcall records of
// the person: created, last signed in, disabled.
func userOf(p rowcall.Person, base string) User {
	u := User{Schemas: []string{SchemaUser}, ID: p.ID, ExternalID: p.Subject, DisplayName: p.Name, Active: p.Active(),
		UserName: firstOf(p.UserName, p.Email, p.Subject),
		Meta: Meta{ResourceType: "User", Created: p.CreatedAt, LastModified: max(p.CreatedAt, p.SeenAt, p.DisabledAt),
			Location: base + Path + "/Users/" + p.ID}}
	if p.Name != "" {
		u.Name = &Name{Formatted: p.Name}
	}
	if p.Email != "" {
		u.Emails = []Email{{Value: p.Email, Type: "work", Primary: true}}
	}
	return u
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// ListResponse is a page of resources (RFC 7644 section 3.4.2).
type ListResponse struct {
	Schemas      []string `json:"schemas"`
	TotalResults int      `json:"totalResults"`
	StartIndex   int      `json:"startIndex"`
	ItemsPerPage int      `json:"itemsPerPage"`
	Resources    []any    `json:"Resources"`
}

func listOf(total, start int, items []any) ListResponse {
	if items == nil {
		items = []any{}
	}
	return ListResponse{Schemas: []string{SchemaListResponse}, TotalResults: total, StartIndex: start, ItemsPerPage: len(items), Resources: items}
}

// maxValue bounds each text a User carries (userName, externalId, a name,
// an email): more is no one's.
const maxValue = 1024

// userIn is a User as POST and PUT send it. Attribute names are
// case-insensitive (RFC 7643 section 2.1), as encoding/json matches them;
// attributes rowcall does not keep (phone numbers, the enterprise
// extension, …) are ignored.
type userIn struct {
	Schemas     []string        `json:"schemas"`
	ExternalID  *string         `json:"externalId"`
	UserName    *string         `json:"userName"`
	Name        *Name           `json:"name"`
	DisplayName *string         `json:"displayName"`
	Emails      []Email         `json:"emails"`
	Active      json.RawMessage `json:"active"`
}

// user is what a POST or PUT says of the person: their attributes, and
// whether they are active (nil: not said).
type user struct {
	ExternalID, UserName, Name, Email string
	HasExternalID                     bool
	Active                            *bool
}

// parseUser reads a User body.
func parseUser(body []byte) (user, error) {
	var in userIn
	if err := json.Unmarshal(body, &in); err != nil {
		return user{}, syntax("the body is not a SCIM User: " + err.Error())
	}
	if !hasSchema(in.Schemas, SchemaUser) {
		return user{}, syntax(`the body's "schemas" does not name ` + SchemaUser)
	}
	var u user
	if in.UserName != nil {
		u.UserName = strings.TrimSpace(*in.UserName)
	}
	if u.UserName == "" {
		return user{}, fail(CodeInvalidValue, http.StatusBadRequest, TypeInvalidValue, "userName is required", "send the person's userName, e.g. their sign-in name at the provider")
	}
	if in.ExternalID != nil {
		u.ExternalID, u.HasExternalID = strings.TrimSpace(*in.ExternalID), strings.TrimSpace(*in.ExternalID) != ""
	}
	var nameParts parts
	nameParts.display = in.DisplayName
	if in.Name != nil {
		nameParts.formatted, nameParts.given, nameParts.family = nonEmpty(in.Name.Formatted), nonEmpty(in.Name.GivenName), nonEmpty(in.Name.FamilyName)
	}
	u.Name, _ = nameParts.name("")
	u.Email = primary(in.Emails)
	if len(in.Active) > 0 && string(in.Active) != "null" {
		a, err := boolean(in.Active)
		if err != nil {
			return user{}, err
		}
		u.Active = &a
	}
	for _, v := range []string{u.UserName, u.ExternalID, u.Name, u.Email} {
		if len(v) > maxValue {
			return user{}, tooLong()
		}
	}
	return u, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func tooLong() error {
	return fail(CodeInvalidValue, http.StatusBadRequest, TypeInvalidValue, "a value is over "+strconv.Itoa(maxValue)+" bytes", "send names, emails and ids of at most "+strconv.Itoa(maxValue)+" bytes")
}

func syntax(message string) error {
	return fail(CodeInvalidSyntax, http.StatusBadRequest, TypeInvalidSyntax, message, "nothing was changed; send the request as RFC 7644 describes it")
}

func hasSchema(schemas []string, urn string) bool {
	for _, s := range schemas {
		if strings.EqualFold(s, urn) {
			return true
		}
	}
	return false
}

// primary is the email a list names primary, else its first work email,
// else its first.
func primary(emails []Email) string {
	first, work := "", ""
	for _, e := range emails {
		v := strings.TrimSpace(e.Value)
		if e.Primary && v != "" {
			return v
		}
		if first == "" {
			first = v
		}
		if work == "" && strings.EqualFold(e.Type, "work") {
			work = v
		}
	}
	return firstOf(work, first)
}

// boolean reads a boolean attribute's value: true or false, or the strings
// "True" and "False" in any case (Microsoft Entra ID sends those).
func boolean(raw json.RawMessage) (bool, error) {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, fail(CodeInvalidValue, http.StatusBadRequest, TypeInvalidValue, "active is "+string(raw)+", not a boolean",
		`send "active": true or false; nothing was changed`)
}

// parts are the pieces of a name a request sent; name is the one name
// rowcall keeps: the display name, else the formatted name, else the given
// and family names joined when the person has none yet (a given name alone
// never replaces a whole name).
type parts struct{ display, formatted, given, family *string }

func (p parts) name(current string) (string, bool) {
	switch {
	case p.display != nil:
		return strings.TrimSpace(*p.display), true
	case p.formatted != nil:
		return strings.TrimSpace(*p.formatted), true
	case (p.given != nil || p.family != nil) && current == "":
		var both []string
		for _, s := range []*string{p.given, p.family} {
			if s != nil && strings.TrimSpace(*s) != "" {
				both = append(both, strings.TrimSpace(*s))
			}
		}
		return strings.Join(both, " "), true
	}
	return current, false
}

// errorOf is err as the *rowcall.Error it is, or nil.
func errorOf(err error) *rowcall.Error {
	var e *rowcall.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
