//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall/js"

	"github.com/rowcall/rowcall/api"
)

// The bridge between the shim (build/shim/worker.mjs) and the handler.
//
// The shim calls binding.serve(head, body, env, ctx, respond) once per
// request: head is "METHOD URL" and then one "name:value" line per header,
// body a Uint8Array (or null), env and ctx the request's own. The shim reads
// at most binding.maxBody (api.MaxAnyBody) bytes and one more of a body, and
// none of one whose Content-Length says it is longer: every route refuses
// such a body by its length (api.BoundBody). serve registers
// the request (its handle, request.go) and hands it to a goroutine of the
// pool, which builds the *http.Request, runs the handler, and answers with
// one call:
//
//	respond(status, head, body)          the whole response; body a Uint8Array
//	respond(status, head, read, cancel)  a streamed one (the handler flushed,
//	                                     or wrote more than streamAfter bytes)
//	respond(0, message)                  the request failed
//
// where head is the status text and then one "name:value" line per header.
// For a stream the shim builds a ReadableStream (in the request's own
// context) whose pull calls read(resolve, reject) for the next chunk (null at
// the end), and whose cancel calls cancel(). Each request crosses into Go
// once and back once, with strings rather than objects: every JavaScript
// value Go holds costs a finalizer and a call per property.

// streamAfter is how much of a body is held before it is streamed instead.
const streamAfter = 1 << 20

var (
	uint8Array = js.Global().Get("Uint8Array")
	jsError    = js.Global().Get("Error")
)

func registerServe(inst *instance) {
	serve := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 5 {
			panic("serve(head, body, env, ctx, respond): wrong number of arguments")
		}
		head, body, respond := args[0], args[1], args[4]
		h := inflight.begin(args[2], args[3])
		workers.do(func() {
			r, err := toRequest(head.String(), body, h)
			if err != nil {
				inflight.end(h)
				respond.Invoke(0, "rowcall: "+err.Error())
				return
			}
			run(inst, r, h, respond)
		})
		return nil
	})
	runtimeContext.Get("binding").Set("serve", serve)
	runtimeContext.Get("binding").Set("maxBody", api.MaxAnyBody)
	registerScheduled(inst) // scheduled.go
	registerComplete()
}

// toRequest builds the *http.Request from the shim's head and body.
func toRequest(head string, jsBody js.Value, h *reqHandle) (*http.Request, error) {
	first, header := readHead(head)
	method, rawURL, ok := strings.Cut(first, " ")
	if !ok {
		return nil, fmt.Errorf("malformed request head %q", first)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	var body []byte
	if jsBody.Type() == js.TypeObject {
		body = make([]byte, jsBody.Length())
		js.CopyBytesToGo(body, jsBody)
	}
	length := int64(len(body))
	if n, err := strconv.ParseInt(header.Get("Content-Length"), 10, 64); err == nil && n > length {
		// The shim read none of a body longer than api.MaxAnyBody: the
		// route's bound refuses it by its length (api.BoundBody).
		length = n
	}
	h.origin = u.Scheme + "://" + u.Host
	ctx, cancel := context.WithCancel(withHandle(context.Background(), h))
	h.cancel = cancel
	r := (&http.Request{
		Method:        method,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: length,
		Host:          cmpOr(header.Get("Host"), u.Host),
		RemoteAddr:    header.Get("Cf-Connecting-Ip"),
		RequestURI:    u.RequestURI(),
	}).WithContext(ctx)
	if u.Scheme == "https" {
		r.TLS = &tls.ConnectionState{} // the client reached the Worker over TLS
	}
	return r, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// run serves r and answers the shim. A panic in the handler answers 500 and
// leaves the instance serving.
func run(inst *instance, r *http.Request, h *reqHandle, respond js.Value) {
	w := &writer{header: http.Header{}, respond: respond, h: h, ctx: r.Context()}
	defer func() {
		inflight.end(h)
		h.cancel()
		if !strings.HasPrefix(r.URL.Path, "/_worker/") {
			d1ledger.record(h.d1Line(r))
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				w.abort(fmt.Errorf("handler aborted"))
				return
			}
			slog.Error("rowcall: panic serving a request", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			if !w.answered {
				w.header = http.Header{"Content-Type": {"application/json; charset=utf-8"}}
				w.status, w.buf = http.StatusInternalServerError, jsonObject("error", "internal", "message", fmt.Sprint("panic: ", p))
				w.finish()
				return
			}
			w.abort(fmt.Errorf("panic: %v", p))
		}
	}()
	inst.ServeHTTP(w, r)
	w.finish()
	if h.after != nil {
		// The response has gone to the shim, which keeps the request's
		// context open until what Go starts in it now is done.
		h.after()
	}
}

// writer is the http.ResponseWriter of one request.
type writer struct {
	header   http.Header
	status   int
	buf      []byte
	h        *reqHandle
	ctx      context.Context
	respond  js.Value
	answered bool // respond was called: the head is on its way

	chunks chan []byte // non-nil once streaming; closed at the end
	failed chan error  // the handler's abnormal end, while streaming
}

var _ http.Flusher = (*writer)(nil)

func (w *writer) Header() http.Header { return w.header }

func (w *writer) WriteHeader(status int) {
	if w.status == 0 && status >= 100 && status <= 999 {
		w.status = status
	}
}

func (w *writer) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.chunks == nil && len(w.buf)+len(p) <= streamAfter {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	if w.chunks == nil {
		w.startStream()
	}
	select {
	case w.chunks <- bytes.Clone(p):
		return len(p), nil
	case <-w.ctx.Done():
		return 0, w.ctx.Err()
	}
}

// Flush starts streaming: the head goes out now, the body as it is written.
func (w *writer) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.chunks == nil {
		w.startStream()
	}
}

// head returns the status text and the header lines, with D1's account of
// the request so far and the bookmark to send back (d1session.go).
func (w *writer) head() string {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	counts, bookmark := w.h.d1Account()
	w.header.Set(rowsReadHeader, strconv.FormatInt(counts.RowsRead, 10))
	w.header.Set(rowsWrittenHeader, strconv.FormatInt(counts.RowsWritten, 10))
	if bookmark != "" {
		w.header.Set(bookmarkHeader, bookmark)
	}
	return writeHead(http.StatusText(w.status), w.header)
}

// finish answers with the whole body, or ends the stream.
func (w *writer) finish() {
	if w.chunks != nil {
		close(w.chunks)
		return
	}
	body := uint8Array.New(len(w.buf))
	js.CopyBytesToJS(body, w.buf)
	w.answered = true
	w.respond.Invoke(w.status, w.head(), body)
}

// abort ends the response abnormally: the shim fails the request, or errors
// its stream.
func (w *writer) abort(err error) {
	switch {
	case !w.answered:
		w.answered = true
		w.respond.Invoke(0, "rowcall: "+err.Error())
	case w.chunks != nil:
		w.failed <- err
		close(w.chunks)
	}
}

// startStream answers with the head and a reader of the body's chunks.
func (w *writer) startStream() {
	w.chunks, w.failed = make(chan []byte, 8), make(chan error, 1)
	if len(w.buf) > 0 {
		w.chunks <- w.buf
		w.buf = nil
	}
	chunks, failed, h := w.chunks, w.failed, w.h
	var read, cancel js.Func
	var once sync.Once
	release := func() { once.Do(func() { read.Release(); cancel.Release() }) }
	read = js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		go func() {
			if c, ok := <-chunks; ok {
				b := uint8Array.New(len(c))
				js.CopyBytesToJS(b, c)
				resolve.Invoke(b)
				return
			}
			select {
			case err := <-failed:
				reject.Invoke(jsError.New("rowcall: " + err.Error()))
			default:
				resolve.Invoke(js.Null())
			}
			release()
		}()
		return nil
	})
	cancel = js.FuncOf(func(js.Value, []js.Value) any {
		h.cancel() // the client went away: writes fail from now on
		go func() {
			for range chunks { // let the handler finish; then release
			}
			release()
		}()
		return nil
	})
	w.answered = true
	w.respond.Invoke(w.status, w.head(), read.Value, cancel.Value)
}
