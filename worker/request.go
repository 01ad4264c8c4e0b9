//go:build js && wasm

package main

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall/js"
)

// reqHandle is one request's view of the Worker platform: the env (bindings,
// vars and secrets) and the ExecutionContext the shim (build/shim/worker.mjs)
// received with that request. It travels in the request's context.Context;
// every binding rowcall touches (D1, R2, settings, credentials) is looked up
// through the handle of the request that needs it, so one Go instance can
// serve many requests at once without one request's platform objects ever
// serving another.
type reqHandle struct {
	id   uint64
	env  js.Value // the request's env
	exec js.Value // the request's ExecutionContext (the shim itself holds the context open, with waitUntil, for Go's operations in it)

	cancel context.CancelFunc // ends the request's context
	after  func()             // work the request does once answered (vectorsync.go), or nil

	db js.Value // the request's DB binding (undefined without one)

	origin string // scheme://host the request came in on: $SELF without ROWCALL_PUBLIC_URL

	// The request's D1 session (d1session.go): started on its first
	// statement from constraint, which ServeHTTP chooses before any runs.
	constraint string
	mu         sync.Mutex
	session    js.Value
	bookmark   string   // the newest bookmark its statements ended at
	counts     d1Counts // what D1 did for it
	each       []d1Statement
}

type handleKey struct{}

// withHandle returns ctx carrying h.
func withHandle(ctx context.Context, h *reqHandle) context.Context {
	return context.WithValue(ctx, handleKey{}, h)
}

// errNoRequest is the error of a platform lookup made outside any request.
var errNoRequest = errors.New("worker: no request in flight to take the Worker's bindings from")

// handleFrom returns the handle of the request ctx belongs to. Work that runs
// on a context of its own (the receipt log's group-commit writer uses
// context.Background) takes the oldest request in flight: that work runs only
// on behalf of requests that wait for it, and every request in one isolate
// has the same bindings.
func handleFrom(ctx context.Context) (*reqHandle, error) {
	if h, ok := ctx.Value(handleKey{}).(*reqHandle); ok {
		return h, nil
	}
	if h := inflight.oldest(); h != nil {
		return h, nil
	}
	return nil, errNoRequest
}

// inflight is the set of requests being served.
var inflight = &requests{m: map[uint64]*reqHandle{}}

type requests struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]*reqHandle
}

// begin registers a request and returns its handle; end removes it.
func (r *requests) begin(env, exec js.Value) *reqHandle {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	h := &reqHandle{id: r.next, env: env, exec: exec, db: env.Get("DB")}
	r.m[h.id] = h
	return h
}

func (r *requests) end(h *reqHandle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, h.id)
}

func (r *requests) oldest() *reqHandle {
	r.mu.Lock()
	defer r.mu.Unlock()
	var o *reqHandle
	for _, h := range r.m {
		if o == nil || h.id < o.id {
			o = h
		}
	}
	return o
}

// runtimeContext is the object the shim hands to Go's run, which syumai's
// wasm_exec.js serves as the global "context": the shim's platform helpers
// (d1, fetch, r2) and binding, where Go registers serve and complete. It holds
// no env: every binding comes from the handle of the request that uses it.
var runtimeContext = js.Global().Get("context")

// d1 returns the request's D1 session: env.DB.withSession(constraint),
// started on first use.
func (h *reqHandle) d1() (js.Value, error) {
	if h.db.IsUndefined() || h.db.IsNull() {
		return js.Undefined(), errNoDB
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session.IsUndefined() {
		h.session = h.db.Call("withSession", sessionArg(cmpOr(h.constraint, firstPrimary)))
	}
	return h.session, nil
}

// primarySession returns a session of its own, first-primary, on h's
// binding: for a statement of work on a context of its own (the receipt log's
// writer), which borrows the oldest request's binding but not its session
// (that one may read a lagging copy; the writer's read of the chain's end must
// be the primary's).
func (h *reqHandle) primarySession() (js.Value, error) {
	if h.db.IsUndefined() || h.db.IsNull() {
		return js.Undefined(), errNoDB
	}
	return h.db.Call("withSession", sessionArg(firstPrimary)), nil
}

// sessionArg is withSession's argument: the two constraints as JavaScript
// strings made once (jsText), a bookmark as it is.
func sessionArg(c string) any {
	if c == firstPrimary || c == firstUnconstrained {
		return jsText(c)
	}
	return c
}

// startFrom chooses the constraint r's D1 session starts from
// (d1session.go), before any of its statements runs.
func (h *reqHandle) startFrom(r *http.Request) error {
	c, err := sessionConstraint(r.Method, r.URL, r.Header)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.constraint = c
	h.mu.Unlock()
	return nil
}

// counted adds statement q's meta to the request's account.
func (h *reqHandle) counted(q string, read, written int64, bookmark string) {
	h.mu.Lock()
	h.counts.add(d1Counts{Statements: 1, RowsRead: read, RowsWritten: written})
	if len(h.each) < maxEach {
		h.each = append(h.each, statement(q, read, written))
	}
	if newerBookmark(bookmark, h.bookmark) {
		h.bookmark = bookmark
	}
	h.mu.Unlock()
	d1ledger.saw(bookmark)
}

// d1Account returns what D1 did for the request so far, and the bookmark its
// answer carries (d1session.go).
func (h *reqHandle) d1Account() (d1Counts, string) {
	h.mu.Lock()
	c, own := h.counts, h.bookmark
	h.mu.Unlock()
	return c, d1ledger.newest(own)
}

// d1Line is the request's line in /_worker/stats once it is done.
func (h *reqHandle) d1Line(r *http.Request) d1Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return d1Request{Request: r.Method + " " + r.URL.RequestURI(), Session: h.constraint, d1Counts: h.counts, Each: h.each}
}

// d1ledger is this instance's D1 account (GET /_worker/stats).
var d1ledger = &d1Ledger{}

var errNoDB = errors.New("the worker has no D1 binding named DB")

// hasBinding reports whether the request's env has name (of any type).
func (h *reqHandle) hasBinding(name string) bool {
	v := h.env.Get(name)
	return !v.IsUndefined() && !v.IsNull()
}

// workers runs functions on long-lived goroutines. A request's handler goes
// deep (router, API, dispatcher, runner, database/sql), and a fresh
// goroutine's stack grows to that depth by copying itself several times, on
// every request; a goroutine from the pool has grown already.
var workers = &pool{work: make(chan func()), max: 64}

type pool struct {
	work chan func()
	max  int32
	n    atomic.Int32
}

// do runs f on an idle pool goroutine, or on a new one.
func (p *pool) do(f func()) {
	select {
	case p.work <- f:
	default:
		p.n.Add(1)
		go p.loop(f)
	}
}

func (p *pool) loop(f func()) {
	for {
		f()
		if p.n.Load() > p.max {
			p.n.Add(-1)
			return
		}
		f = <-p.work
	}
}
