package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"sync"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/api/scim"
	"github.com/rowcall/rowcall/internal/jsontext"
	"github.com/rowcall/rowcall/runners/fn/modules"
)

// statuses is the one table from an error code to its HTTP status; a code not
// in it is a 400. (An Error's own Status, for a code whose status depends on
// where it is reported, wins.)
var statuses = map[rowcall.Code]int{
	rowcall.ENotFound: http.StatusNotFound, rowcall.EUnknownKey: http.StatusNotFound,
	rowcall.EConflict: http.StatusConflict, rowcall.EDisabled: http.StatusConflict,
	rowcall.EUnauthorized:       http.StatusUnauthorized,
	rowcall.EForbidden:          http.StatusForbidden,
	rowcall.ETooLarge:           http.StatusRequestEntityTooLarge,
	rowcall.EMediaType:          http.StatusUnsupportedMediaType,
	rowcall.EVersionConflict:    http.StatusPreconditionFailed,
	rowcall.EHygiene:            http.StatusUnprocessableEntity,
	rowcall.EExpiryOutOfRange:   http.StatusUnprocessableEntity,
	rowcall.EReceiptUnavailable: http.StatusServiceUnavailable,
	rowcall.EInternal:           http.StatusInternalServerError,

	// the gate's refusals
	rowcall.ETokenRevoked: http.StatusUnauthorized, rowcall.ETokenExpired: http.StatusUnauthorized,
	rowcall.EAudienceMismatch: http.StatusForbidden, rowcall.EOwnerOnly: http.StatusForbidden,
	rowcall.EIncludeOutOfScope: http.StatusForbidden, rowcall.ERiskCeiling: http.StatusForbidden,
	rowcall.EFixedBody:          http.StatusForbidden,
	rowcall.ERoleForbids:        http.StatusForbidden, // a person's role, also when the gate refuses their call
	rowcall.ECrossSite:          http.StatusForbidden,
	rowcall.ESignInFailed:       http.StatusForbidden,
	rowcall.EContractChanged:    http.StatusConflict,
	rowcall.EDefinitionChanged:  http.StatusConflict,
	rowcall.EPayloadCeiling:     http.StatusRequestEntityTooLarge,
	rowcall.EInvalidInputSchema: http.StatusUnprocessableEntity,
	rowcall.EInvalidArguments:   http.StatusBadRequest,
	rowcall.ERateLimited:        http.StatusTooManyRequests, rowcall.EBudgetExhausted: http.StatusTooManyRequests, // with Retry-After

	// approvals: a call that waits is accepted, not refused
	rowcall.EApprovalRequired: http.StatusAccepted,
	rowcall.EApprovalPending:  http.StatusConflict, rowcall.EApprovalUsed: http.StatusConflict,
	rowcall.EApprovalMismatch: http.StatusConflict, rowcall.EApprovalDecided: http.StatusConflict,
	rowcall.EApprovalDenied: http.StatusForbidden, rowcall.EApproveForbidden: http.StatusForbidden,
	rowcall.EApprovalExpired: http.StatusGone, rowcall.EApprovalUnknown: http.StatusNotFound,
	rowcall.ETooManyApprovals: http.StatusTooManyRequests,

	// tenants
	rowcall.EInvalidTenant: http.StatusBadRequest, rowcall.EUnknownTenant: http.StatusNotFound,
	rowcall.ETenantExists: http.StatusConflict, rowcall.ETenantSuspended: http.StatusForbidden,
	rowcall.EQuotaExceeded: http.StatusForbidden,

	// auth columns a row may not have
	rowcall.AuthReservedVariable: http.StatusUnprocessableEntity, rowcall.EAuthOutsidePrefix: http.StatusUnprocessableEntity,
	rowcall.AuthKeyInRow: http.StatusUnprocessableEntity,

	// the module registry's
	modules.CodeBadName: http.StatusBadRequest, modules.CodeBadTarget: http.StatusBadRequest,
	modules.CodeNotWasm: http.StatusUnprocessableEntity, modules.CodeInvalid: http.StatusUnprocessableEntity,
	modules.CodeNotCommand: http.StatusUnprocessableEntity, modules.CodeForbiddenImport: http.StatusUnprocessableEntity,
	modules.CodeTooComplex: http.StatusUnprocessableEntity,
	modules.CodeInUse:      http.StatusConflict, modules.CodeDigestMismatch: http.StatusConflict,
	modules.CodeBlobMissing: http.StatusInternalServerError,
}

// status is e's HTTP status: its own Status, or its code's (statuses).
func status(e *rowcall.Error) int {
	if e.Status != 0 {
		return e.Status
	}
	if s, ok := statuses[e.Code]; ok {
		return s
	}
	return http.StatusBadRequest
}

// jsonContentType is every JSON answer's Content-Type header value, shared:
// set as the header's whole slice, it costs no allocation a request (nothing
// appends to a response's Content-Type).
var jsonContentType = []string{"application/json; charset=utf-8"}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	if o, ok := v.(ordered); ok { // written directly: the dispatch answer's path
		b := answers.Get().(*bytes.Buffer)
		defer answers.put(b)
		if err := o.write(b); err != nil {
			slog.Error("unencodable answer", "err", err)
			return
		}
		b.WriteByte('\n')
		w.Write(b.Bytes())
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// WriteError writes err as the API does (writeError), for the handlers
// in front of it (the tenants' router).
func WriteError(w http.ResponseWriter, r *http.Request, err error) { writeError(w, r, err) }

// WriteJSON writes v as the API's JSON answers are written.
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// writeError writes err as {"error":code,"message":…,"how_to_fix":…,…} with the
// code first. A refused mutation says "state_changed":false. Errors that are not
// *rowcall.Error are logged and reported without their text.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *rowcall.Error
	if !errors.As(err, &e) {
		if r.Context().Err() == nil { // not a caller that hung up
			slog.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		e = &rowcall.Error{Code: rowcall.EInternal, Message: "the server failed; the log has the cause"}
	}
	if scim.IsPath(r.URL.Path) { // the identity provider reads SCIM's Error
		scim.WriteError(w, e, status(e))
		return
	}
	body := ordered{{"error", e.Reason()}}
	if e.Message != "" {
		body = append(body, kv{"message", e.Message})
	}
	if e.HowToFix != "" {
		body = append(body, kv{"how_to_fix", e.HowToFix})
	}
	extra := make([]string, 0, len(e.Extra))
	for k := range e.Extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		body = append(body, kv{k, e.Extra[k]})
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && e.Code != rowcall.EUnauthorized {
		body = append(body, kv{"state_changed", false})
	}
	if wait, ok := e.Extra["retry_after"].(int); ok { // a limit's refusal: seconds until it may pass
		w.Header().Set("Retry-After", strconv.Itoa(wait))
	}
	writeJSON(w, status(e), body)
}

// kv and ordered write a JSON object whose keys keep their order, so responses
// read like the seed prints them ({"ok":true,"key":…}).
type kv struct {
	K string
	V any
}
type ordered []kv

// MarshalJSON writes the pairs in order.
func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := o.write(&b)
	return b.Bytes(), err
}

// write writes the object to b: strings, booleans and nested objects directly
// (a dispatch answer is made of these), anything else through encoding/json.
func (o ordered) write(b *bytes.Buffer) error {
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		jsontext.Write(b, p.K)
		b.WriteByte(':')
		switch v := p.V.(type) {
		case string:
			jsontext.Write(b, v)
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case ordered:
			if err := v.write(b); err != nil {
				return err
			}
		default:
			j, err := marshal(v)
			if err != nil {
				return err
			}
			b.Write(j)
		}
	}
	b.WriteByte('}')
	return nil
}

// answers are writeJSON's buffers for ordered answers, reused across
// requests (a dispatch answer is a few hundred bytes); one grown past
// maxPooled is left to the collector.
var answers = bufferPool{sync.Pool{New: func() any { return new(bytes.Buffer) }}}

type bufferPool struct{ sync.Pool }

const maxPooled = 64 << 10

func (p *bufferPool) put(b *bytes.Buffer) {
	if b.Cap() <= maxPooled {
		b.Reset()
		p.Put(b)
	}
}

// marshal is json.Marshal without HTML escaping.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// versioned answers a read of something with a version: v with its ETag, or
// err.
func versioned(w http.ResponseWriter, r *http.Request, version int64, v any, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(version))
	writeJSON(w, http.StatusOK, v)
}
