package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall"
)

// MaxBody is the largest request body the API reads: room for one row at
// MaxValue with JSON escaping.
const MaxBody = 4 << 20

// readJSON reads a JSON object body into v, refusing a wrong content type, an
// oversized body, malformed JSON (saying where) and anything but one object.
func readJSON(r *http.Request, v any) error {
	ct := r.Header.Get("Content-Type")
	mt := ct
	if ct != "application/json" { // the common header needs no parsing
		mt, _, _ = mime.ParseMediaType(ct)
	}
	if mt != "application/json" && mt != "application/merge-patch+json" {
		return &rowcall.Error{Code: rowcall.EMediaType, Message: fmt.Sprintf("Content-Type %q is not JSON", ct),
			HowToFix: "send the body as JSON with the header Content-Type: application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &rowcall.Error{Code: rowcall.ETooLarge, Message: fmt.Sprintf("the request body is over %d MiB (%d bytes), the largest body the API reads", MaxBody>>20, MaxBody),
			HowToFix: fmt.Sprintf("send a body of at most %d MiB; keep large payloads out of the request", MaxBody>>20)}
	}
	if err != nil {
		return &rowcall.Error{Code: rowcall.EInvalid, Message: "could not read the request body: " + err.Error()}
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == 'n' {
		return &rowcall.Error{Code: rowcall.EBadJSON, Message: "the body must be a JSON object, not null", HowToFix: `send {"key":"…",…}`}
	}
	if p, ok := v.(plainDecoder); ok && p.decodePlain(body) {
		return nil // what json.Unmarshal would have made of it, without it
	}
	if json.Unmarshal(body, v) == nil {
		return nil // one JSON value and nothing after it: what the decoder below accepts
	}
	// The decoder's errors say where the body went wrong.
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return malformed(body, err)
	}
	if dec.More() {
		return malformed(body, fmt.Errorf("unexpected data after the JSON object at byte %d", dec.InputOffset()))
	}
	return nil
}

// plainDecoder is a request body that reads its common form itself (ok), and
// leaves anything else to encoding/json, with the same result.
type plainDecoder interface{ decodePlain(body []byte) (ok bool) }

// readObject reads a JSON object body as its raw fields.
func readObject(r *http.Request) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	return obj, readJSON(r, &obj)
}

// malformed explains a JSON decoding error with its line and column.
func malformed(body []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	off := int64(-1)
	msg := err.Error()
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ) && typ.Field != "":
		off, msg = typ.Offset, fmt.Sprintf("%s must be a %s, not %s", typ.Field, typ.Type, typ.Value)
	case errors.As(err, &typ):
		off, msg = typ.Offset, "the body must be a JSON object, not "+typ.Value
	case errors.Is(err, io.EOF):
		msg = "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		off, msg = int64(len(body)), "the JSON ends before it is complete"
	}
	e := &rowcall.Error{Code: rowcall.EBadJSON, Message: msg, HowToFix: "send one well-formed JSON object; nothing was changed"}
	if off >= 0 {
		line, col := position(body, off)
		e.Message = fmt.Sprintf("%s at line %d, column %d (byte %d)", msg, line, col, off)
		e.Extra = map[string]any{"line": line, "column": col, "offset": off}
	}
	return e
}

func position(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	before := b[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
}

// ifMatch reads the If-Match header: 0 when absent or "*".
func ifMatch(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.Header.Get("If-Match"))
	if v == "" || v == "*" {
		return 0, nil
	}
	v = strings.Trim(strings.TrimPrefix(v, "W/"), `"`)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, &rowcall.Error{Code: rowcall.EInvalid, Message: fmt.Sprintf("If-Match %q is not a row version", r.Header.Get("If-Match")),
			HowToFix: `send the ETag from GET /api/directory/{key}, e.g. If-Match: "3"`}
	}
	return n, nil
}

func etag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// validKey refuses a key that breaks the key rule.
func validKey(key string) error {
	if rowcall.ValidKey(key) {
		return nil
	}
	shown := key
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	return &rowcall.Error{Code: rowcall.EInvalid, Message: fmt.Sprintf("key %q breaks the key rule", shown),
		HowToFix: "a key is " + rowcall.KeyRule, Extra: map[string]any{"field": "key"}}
}
