package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/modules"
)

// Every route's body is bounded where it is registered: router's HandleFunc
// and Handle give a route MaxBody, and the few that take more (or should take
// less: the anonymous forms) say so with HandleFuncUpTo. A body over the
// route's bound is 413 too_large: at once when its Content-Length says so,
// before a byte of it is read; for a body of unknown length (chunked), when
// the handler reads past the bound, whatever the handler then writes.

// MaxAnyBody is the largest body any route reads: a fn module. The worker's
// shim reads no more of a body than this (worker/serve.go).
const MaxAnyBody = modules.MaxSize

// Route is a pattern the API serves and the largest body it reads.
type Route struct {
	Pattern string
	MaxBody int64
}

// router registers the API's routes on its mux, each behind its body bound.
type router struct {
	mux    *http.ServeMux
	routes []Route
}

// HandleFunc registers f for pattern with the API's body bound, MaxBody.
func (m *router) HandleFunc(pattern string, f http.HandlerFunc) { m.HandleUpTo(pattern, MaxBody, f) }

// Handle registers h for pattern with the API's body bound, MaxBody.
func (m *router) Handle(pattern string, h http.Handler) { m.HandleUpTo(pattern, MaxBody, h) }

// HandleFuncUpTo registers f for pattern with a body bound of its own.
func (m *router) HandleFuncUpTo(pattern string, limit int64, f http.HandlerFunc) {
	m.HandleUpTo(pattern, limit, f)
}

// HandleUpTo registers h for pattern with a body bound of its own, at most
// MaxAnyBody.
func (m *router) HandleUpTo(pattern string, limit int64, h http.Handler) {
	if limit <= 0 || limit > MaxAnyBody {
		panic(fmt.Sprintf("api: route %s bounds its body at %d bytes: a bound is 1 to MaxAnyBody (%d)", pattern, limit, MaxAnyBody))
	}
	m.routes = append(m.routes, Route{pattern, limit})
	m.mux.Handle(pattern, BoundBody(limit, pattern, h))
}

// Routes lists every pattern the API serves, with its body bound, in the
// order they were registered.
func (h *Handler) Routes() []Route { return append([]Route(nil), h.router.routes...) }

// BoundBody serves next with request bodies of at most limit bytes; route
// names what is refused in the answer ("" for the API as a whole).
func BoundBody(limit int64, route string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			writeError(w, r, bodyTooLarge(limit, route))
			return
		}
		if r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody {
			bw := &boundedWriter{ResponseWriter: w, r: r, limit: limit, route: route}
			r.Body = &boundedBody{ReadCloser: http.MaxBytesReader(w, r.Body, limit), w: bw}
			w = bw
		}
		next.ServeHTTP(w, r)
	})
}

// bodyTooLarge is the refusal of a body over limit bytes.
func bodyTooLarge(limit int64, route string) error {
	what := "the API"
	if route != "" && limit != MaxBody {
		what = route
	}
	return &rowcall.Error{Code: rowcall.ETooLarge, Message: fmt.Sprintf("the request body is over %s (%d bytes), the largest body %s reads", size(limit), limit, what),
		HowToFix: fmt.Sprintf("send a body of at most %s; keep large payloads out of the request", size(limit)),
		Extra:    map[string]any{"max_body": limit}}
}

// size is n bytes in the largest unit that says it exactly.
func size(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// boundedBody is a body of unknown length read through http.MaxBytesReader:
// reading past the bound answers 413 (boundedWriter.refuse).
type boundedBody struct {
	io.ReadCloser
	w *boundedWriter
}

func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooBig *http.MaxBytesError
	if err != nil && errors.As(err, &tooBig) {
		b.w.refuse()
	}
	return n, err
}

// boundedWriter is the response of a request whose body is of unknown
// length: once the handler has read past the bound, the answer is the 413,
// and what the handler writes after is dropped.
type boundedWriter struct {
	http.ResponseWriter
	r     *http.Request
	limit int64
	route string

	mu             sync.Mutex
	wrote, refused bool
}

// refuse answers 413 unless the handler answered already.
func (w *boundedWriter) refuse() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wrote || w.refused {
		return
	}
	w.refused = true
	writeError(w.ResponseWriter, w.r, bodyTooLarge(w.limit, w.route))
}

// passes reports whether the handler's writes go out, and marks the answer
// begun.
func (w *boundedWriter) passes() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wrote = w.wrote || !w.refused
	return !w.refused
}

func (w *boundedWriter) WriteHeader(status int) {
	if w.passes() {
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if !w.passes() {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *boundedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.passes() {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *boundedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
