//go:build js && wasm

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall/js"
)

// fetchTransport sends an http.Request with the Worker's fetch(), through the
// shim's fetch helper (ops.go): one call into JavaScript with the request's
// head and body, one answer with the response's head and whole body
// (redirect: "manual", so http.Client follows redirects itself and guard
// checks every hop). syumai's fetch client, which this replaces, converts the
// request and the response header by header and reads the body chunk by
// chunk through syscall/js, each chunk a promise callback into Go that the
// shim could not account to a request context. The context is watched: a
// call whose context ends returns at once (what fetch() answers later is
// dropped).
type fetchTransport struct{}

// fetchMax caps a response body read through fetchTransport; the body of a
// longer response ends with errTooLong after fetchMax bytes. (The http
// runner reads at most its own limit plus one byte: 1 MiB by default.)
const fetchMax = 8 << 20

var errTooLong = fmt.Errorf("fetch: the response body is longer than %d bytes", fetchMax)

var shimFetch = runtimeContext.Get("fetch")

func (fetchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	head := writeHead(req.Method+" "+req.URL.String(), req.Header)
	body := js.Null()
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if len(b) > 0 || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
			body = uint8Array.New(len(b))
			js.CopyBytesToJS(body, b)
		}
	}
	r, err := shimOp(ctx, shimFetch, head, body, fetchMax)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("fetch: %w", err)
	}
	// r.text: "STATUS STATUS_TEXT" and then one "name:value" line per header;
	// r.body: the body, r.more: whether it went on past fetchMax.
	first, header := readHead(r.text)
	code, _, _ := strings.Cut(first, " ")
	status, err := strconv.Atoi(code)
	if err != nil {
		return nil, fmt.Errorf("fetch: malformed status line %q", first)
	}
	var rd io.Reader = bytes.NewReader(r.body)
	length := int64(len(r.body))
	if r.more {
		rd, length = io.MultiReader(rd, errReader{errTooLong}), -1
	}
	return &http.Response{
		Status:        first,
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          io.NopCloser(rd),
		ContentLength: length,
		Request:       req,
	}, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
