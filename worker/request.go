//go:build js && wasm

package main

import (
	"context"
	"database/sql/driver"
	"errors"
	"sync"
	"syscall/js"

	"github.com/syumai/workers/cloudflare/d1"
	"github.com/syumai/workers/cloudflare/r2"
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
	exec js.Value // the request's ExecutionContext

	d1Once sync.Once
	d1     driver.Conn
	d1Err  error

	r2Once sync.Once
	r2     *r2.Bucket // nil without a MODULES binding
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
	h := &reqHandle{id: r.next, env: env, exec: exec}
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

// runtimeContext is syumai's runtime context: the object the shim hands to
// Go's run, which syumai's wasm_exec.js serves as the global "context". The
// shim gives it a binding object (syumai's packages read it at init) and no
// env: syumai's constructors that read env (d1.OpenConnector, r2.NewBucket,
// cloudflare.GetBinding) panic unless called inside withEnv.
var runtimeContext = js.Global().Get("context")

// withEnv runs f with syumai's runtime context showing this request's env,
// and hides it again before returning, so syumai's constructors wrap this
// request's binding objects. No other goroutine can run while f does: Go on
// js/wasm switches goroutines only when one blocks, and f does not block.
func (h *reqHandle) withEnv(f func()) {
	runtimeContext.Set("env", h.env)
	defer runtimeContext.Delete("env")
	f()
}

// d1Conn returns syumai's D1 connection on this request's DB binding.
func (h *reqHandle) d1Conn() (driver.Conn, error) {
	h.d1Once.Do(func() {
		var c driver.Connector
		h.withEnv(func() { c, h.d1Err = d1.OpenConnector("DB") })
		if h.d1Err == nil {
			h.d1, h.d1Err = c.Connect(context.Background())
		}
	})
	return h.d1, h.d1Err
}

// bucket returns syumai's R2 bucket on this request's MODULES binding, or nil
// when there is none.
func (h *reqHandle) bucket() *r2.Bucket {
	h.r2Once.Do(func() {
		h.withEnv(func() {
			if b, err := r2.NewBucket("MODULES"); err == nil {
				h.r2 = b
			}
		})
	})
	return h.r2
}

// hasBinding reports whether the request's env has name (of any type).
func (h *reqHandle) hasBinding(name string) bool {
	v := h.env.Get(name)
	return !v.IsUndefined() && !v.IsNull()
}
