package rowcall

import (
	"errors"
	"fmt"
)

// Error is the error every layer reports: a stable code a program can branch on,
// and a message a person can act on. Extra holds named details (the literal JSON
// fields the seed's failure table prints, such as "attempted" or "did_you_mean").
type Error struct {
	Code     Code
	Message  string
	HowToFix string
	Extra    map[string]any
	Status   int // the HTTP status, when the code alone does not decide it (gate refusals)
}

func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
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
