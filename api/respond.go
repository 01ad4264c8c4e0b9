package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/internal/jsontext"
)

// status maps an error code to its HTTP status.
func status(code rowcall.Code) int {
	switch {
	case code == rowcall.ENotFound, code == rowcall.EUnknownKey:
		return http.StatusNotFound
	case code == rowcall.EConflict, code == rowcall.EDisabled:
		return http.StatusConflict
	case code == rowcall.EUnauthorized:
		return http.StatusUnauthorized
	case code == rowcall.EForbidden:
		return http.StatusForbidden
	case code == rowcall.ETooLarge:
		return http.StatusRequestEntityTooLarge
	case code == rowcall.EMediaType:
		return http.StatusUnsupportedMediaType
	case code == rowcall.EVersionConflict:
		return http.StatusPreconditionFailed
	case strings.HasPrefix(string(code), string(rowcall.EHygiene)):
		return http.StatusUnprocessableEntity
	case code == rowcall.EInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if o, ok := v.(ordered); ok { // written directly: the dispatch answer's path
		var b bytes.Buffer
		if err := o.write(&b); err != nil {
			slog.Error("unencodable answer", "err", err)
			return
		}
		w.Write(append(b.Bytes(), '\n'))
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

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
	body := ordered{{"error", string(e.Code)}}
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
	code := status(e.Code)
	if s, ok := moduleStatus[e.Code]; ok {
		code = s
	}
	if e.Status != 0 {
		code = e.Status
	}
	writeJSON(w, code, body)
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
