package outbound

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Self serves the calls rows make to this host's own API in-process: a
// request whose URL is under the host's base URL (the value of $SELF, see
// package args) goes to Handler, with the headers the row set (its injected
// credential included), and never touches the network. Any other request goes
// to Next. This is how "the host may always call its own API" holds
// everywhere: on the local host whatever its listen or public address (a
// public URL behind a proxy that resolves to a private address included), and
// on the Cloudflare worker, which cannot fetch() its own hostname (Cloudflare
// refuses a Worker's subrequest to itself).
//
// A call served in-process may itself call in-process; more than MaxSelfDepth
// nested calls fail with ErrSelfLoop, so a row that calls itself through the
// API ends. The response streams: Handler runs in its own goroutine and its
// body is read as it is written (a reader that stops reading ends it).
type Self struct {
	// Base returns the base URL of this host for the call in ctx
	// (scheme://host[:port][/prefix]); "" serves nothing in-process.
	Base func(ctx context.Context) string
	// Handler is the host's API. Set it before the first call; nil sends
	// everything to Next.
	Handler http.Handler
	// Next carries every other request.
	Next http.RoundTripper
}

// MaxSelfDepth bounds nested in-process calls. Each one enters the host's API
// afresh (a new top-level call at Depth 0), so rowcall.MaxDepth, which bounds
// nesting inside one call tree, cannot see them; this counts them instead.
const MaxSelfDepth = 8

// ErrSelfLoop is the error of a call nested more than MaxSelfDepth deep.
var ErrSelfLoop = fmt.Errorf("outbound: more than %d nested calls of this host's own API (a row that calls itself through the API?)", MaxSelfDepth)

type selfDepthKey struct{}

// Client returns a copy of c (redirect rule and timeout kept) whose transport
// is s, with c's transport as Next when s has none.
func (s *Self) Client(c *http.Client) *http.Client {
	cp := *c
	if s.Next == nil {
		s.Next = c.Transport
		if s.Next == nil {
			s.Next = http.DefaultTransport
		}
	}
	cp.Transport = s
	return &cp
}

// RoundTrip implements http.RoundTripper.
func (s *Self) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var base string
	if s.Base != nil && s.Handler != nil {
		base = s.Base(ctx)
	}
	path, ok := under(base, req.URL)
	if !ok {
		return s.Next.RoundTrip(req)
	}
	depth, _ := ctx.Value(selfDepthKey{}).(int)
	if depth >= MaxSelfDepth {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, ErrSelfLoop
	}
	in := req.Clone(context.WithValue(ctx, selfDepthKey{}, depth+1))
	in.URL.Path, in.URL.RawPath = path, ""
	in.RequestURI = in.URL.RequestURI()
	in.Host = req.URL.Host
	if in.Body == nil {
		in.Body = http.NoBody
	}
	if req.URL.Scheme == "https" {
		in.TLS = &tls.ConnectionState{}
	}
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				err := fmt.Errorf("outbound: this host's handler failed: %v", p)
				if p == http.ErrAbortHandler {
					err = errors.New("outbound: this host's handler aborted the response")
				}
				w.fail(err)
				return
			}
			w.start(http.StatusOK)
			pw.Close()
		}()
		s.Handler.ServeHTTP(w, in)
	}()
	select {
	case <-w.ready:
	case <-ctx.Done():
		pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	if w.err != nil {
		return nil, w.err
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.sent, Body: pr, ContentLength: -1, Request: req,
	}, nil
}

// under reports whether u is under base, and u's path with base's path
// prefix taken off.
func under(base string, u *url.URL) (string, bool) {
	if base == "" {
		return "", false
	}
	b, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || !strings.EqualFold(b.Scheme, u.Scheme) || !strings.EqualFold(hostPort(b), hostPort(u)) {
		return "", false
	}
	if b.Path == "" {
		return u.Path, true
	}
	rest, ok := strings.CutPrefix(u.Path, b.Path)
	if !ok || (rest != "" && rest[0] != '/') {
		return "", false
	}
	if rest == "" {
		rest = "/"
	}
	return rest, true
}

// hostPort is u's host with the scheme's default port written out.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if strings.EqualFold(u.Scheme, "https") {
		return u.Host + ":443"
	}
	return u.Host + ":80"
}

// pipeResponse is the http.ResponseWriter of an in-process call: the head is
// handed over at the first write, flush or WriteHeader (or when the handler
// returns), the body through a pipe.
type pipeResponse struct {
	header http.Header
	body   *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
	status int
	sent   http.Header
	err    error
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) start(status int) {
	w.once.Do(func() {
		w.status, w.sent = status, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeResponse) WriteHeader(status int) {
	if status >= 200 && status <= 999 {
		w.start(status)
	}
}

func (w *pipeResponse) Write(p []byte) (int, error) {
	w.start(http.StatusOK)
	return w.body.Write(p)
}

// Flush hands the head over; the body is unbuffered already.
func (w *pipeResponse) Flush() { w.start(http.StatusOK) }

// fail ends the call with err: as its error before the head, as the body's
// read error after.
func (w *pipeResponse) fail(err error) {
	started := true
	w.once.Do(func() {
		started = false
		w.err = err
		close(w.ready)
	})
	if started {
		w.body.CloseWithError(err)
	}
}
