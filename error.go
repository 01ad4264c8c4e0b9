package rowcall

import (
	"errors"
	"fmt"
	"strings"
)

// Error is the error every layer reports: a stable code a program can branch on,
// and a message a person can act on. Args are the code's dynamic parts (a token
// id, two contract hashes), which Reason renders into the seed's literal text
// ("token_revoked:<id>"). Extra holds named details (the literal JSON fields
// the seed's failure table prints, such as "attempted" or "did_you_mean").
type Error struct {
	Code     Code
	Args     []string
	Message  string
	HowToFix string
	Extra    map[string]any
	Status   int // the HTTP status, when the code alone does not decide it (a 501 for a missing feature)
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Reason()
	}
	return e.Reason() + ": " + e.Message
}

// Reason is the code with its args as the seed prints it: the JSON "error"
// field, a receipt's refused:<reason>. A code's args follow a ':', each after
// its own ':' unless argForms gives the code its own form
// (contract_changed:<pinned>!=<current>).
func (e *Error) Reason() string {
	if len(e.Args) == 0 {
		return string(e.Code)
	}
	return string(e.Code) + ":" + e.argText()
}

// argText is the args part of Reason, after the code's ':'.
func (e *Error) argText() string {
	form, ok := argForms[e.Code]
	if !ok {
		return strings.Join(e.Args, ":")
	}
	a := make([]any, len(e.Args))
	for i, s := range e.Args {
		a[i] = s
	}
	return fmt.Sprintf(form, a...)
}

// argForms are the codes whose args do not simply follow ':' by ':'.
var argForms = map[Code]string{
	EAudienceMismatch: "%s!=%s",      // the token's audience, this host's
	EContractChanged:  "%s!=%s",      // the pinned contract, the current one
	ERiskCeiling:      "%s<row:high", // the token's ceiling
	EPayloadCeiling:   "%s>%s",       // the body's length, the token's ceiling
	EBudgetExhausted:  "%s>=%s",      // the amount spent, the budget (limits.go)
	EHygiene:          " %s",         // the verdict: "registry_hygiene_refused: <verdict>"
}

// Failure is e as a nested call reports it to the runner that made the call:
// ERR:<kind>:<reason> — <message> (ERR:gate:token_revoked:tok_… — …).
func (e *Error) Failure(kind string) *Failure {
	f := Fail(kind, string(e.Code))
	if len(e.Args) > 0 {
		f.Args = []string{e.argText()}
	}
	return f.Because(e.Message)
}

// Code is an Error's stable code. Its HTTP status is decided by the API.
type Code string

// The error codes. The string values that the seed prints literally are kept
// literally ("unauthorized", "no recognized fields", …).
const (
	ENotFound        Code = "not_found"
	EUnknownKey      Code = "unknown_key"
	EConflict        Code = "key_exists"
	EUnauthorized    Code = "unauthorized"
	EForbidden       Code = "forbidden"
	EInvalid         Code = "invalid_request"
	EBadJSON         Code = "malformed_json"
	ETooLarge        Code = "too_large"
	EMediaType       Code = "unsupported_media_type"
	ENoFields        Code = "no recognized fields"
	EUnknownFields   Code = "unknown_fields"
	EHygiene         Code = "registry_hygiene_refused"
	EVersionConflict Code = "version_conflict"
	EDisabled        Code = "row_disabled"
	EInternal        Code = "internal"

	// EReceiptUnavailable: a stored receipt cannot be read now (its sealed
	// segment is missing from object storage, or the storage fails). The
	// answer names the segment, never where the storage keeps it.
	EReceiptUnavailable Code = "receipt_unavailable"

	// EExpandTools: the row ROWCALL_ASK_EXPAND names offers tools (its
	// allowed_categories is not empty), so rows' text, which may be a
	// hostile server's, would reach a model that may call rows
	// (internal/expand).
	EExpandTools Code = "expand_row_offers_tools"

	// EConnectionRequired: what was asked needs a person's sign-in at the
	// provider named in Args (an MCP server's import, docs/mcp.md); Extra's
	// connect_url is the link a person opens to sign in, after which the
	// request is made again.
	EConnectionRequired Code = "connection_required"
)

// The gate's refusal codes (a call a token or the row's input_schema does not
// allow); their args are in the order argForms shows.
const (
	ETokenRevoked       Code = "token_revoked"        // the token's id
	ETokenExpired       Code = "token_expired"        // when it expired
	EAudienceMismatch   Code = "audience_mismatch"    // the token's audience, this host's
	EOwnerOnly          Code = "owner_only"           // the row's key
	EIncludeOutOfScope  Code = "include_out_of_scope" // the included block's key
	EContractChanged    Code = "contract_changed"     // the pinned contract, the current one
	ERiskCeiling        Code = "risk_ceiling"         // the token's ceiling
	EFixedBody          Code = "fixed_body"           // "mismatch"
	EPayloadCeiling     Code = "payload_ceiling"      // the body's length, the token's ceiling
	EInvalidInputSchema Code = "invalid_input_schema" // the row's key
	EInvalidArguments   Code = "invalid_arguments"
	// EDefinitionChanged: the row's MCP server changed the tool's definition
	// (the row is drifted) and the owner has not accepted or rejected the
	// change yet; the row is held for every caller (ROWCALL_MCP_DRIFT).
	EDefinitionChanged Code = "definition_changed" // the row's key
	// ERoleForbids is the refusal of a person (or a token they minted) whose
	// role lacks the right an action needs (role_forbids:<role>:<right>).
	ERoleForbids Code = "role_forbids" // the person's role ("none" when they have none), the right
	// ECrossSite is the refusal of a state-changing request authenticated
	// by a session cookie that did not come from the host's own pages.
	ECrossSite Code = "cross_site_request"
	// ESignInFailed is a sign-in at the organisation's OpenID provider
	// that did not end in a session (signin_failed:<reason>): the state
	// unknown or used (state), the provider unreachable (provider), the
	// answer from another issuer (issuer), the code missing or not
	// redeemed (code), the ID token missing or not verified (id_token),
	// its nonce not this sign-in's (nonce), or the person disabled
	// (disabled).
	ESignInFailed Code = "signin_failed"
	// Tenants (serve --tenants, docs/tenants.md): a name that is not a
	// tenant's; no tenant of that name (unknown_tenant:<name>), the same
	// answer whether it never existed or was deleted; a name taken
	// (tenant_exists:<name>); a tenant the operator suspended
	// (tenant_suspended:<name>).
	EInvalidTenant   Code = "invalid_tenant_name"
	EUnknownTenant   Code = "unknown_tenant"
	ETenantExists    Code = "tenant_exists"
	ETenantSuspended Code = "tenant_suspended"
	// EQuotaExceeded: the directory holds what its operator's quota allows
	// (quota_exceeded:<quota>, e.g. rows).
	EQuotaExceeded Code = "quota_exceeded"
)

// Errorf returns an *Error with code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns err's code, EInternal for a foreign error, "" for nil.
func ErrorCode(err error) Code {
	var e *Error
	if err == nil {
		return ""
	}
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}
