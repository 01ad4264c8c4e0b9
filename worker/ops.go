//go:build js && wasm

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall/js"
	"time"
)

// Platform operations. Go reaches D1, fetch() and R2 only through the shim's
// helpers (build/shim/worker.mjs): d1(id, db, …), fetch(id, …) and
// r2(id, bucket, …), each given the binding of the request the work is for,
// and sign(id, seed, msg) (sign.go).
// A helper answers once, through complete(id, ok, text, body, more), which Go
// registers at start; the shim runs that answer in the request context that
// started the operation, and counts the operation against that context (so a
// context is kept until what Go started in it is done).

// opLimit bounds the wait for one operation. An operation whose request
// context workerd cancels never answers; without a bound, the goroutine
// waiting for it — it may be the receipt log's writer, which every dispatch
// waits on — would wait forever. (D1 ends a query after 30 seconds.)
const opLimit = 2 * time.Minute

var errOpLimit = fmt.Errorf("no answer within %s (the request context that ran it may have ended)", opLimit)

// shimOp calls the helper fn(id, args…) and waits for its answer, for ctx to
// end, or for opLimit (an answer that comes later is dropped).
func shimOp(ctx context.Context, fn js.Value, args ...any) (opResult, error) {
	id, ch := completions.add()
	fn.Invoke(append([]any{id}, args...)...)
	limit := time.NewTimer(opLimit)
	defer limit.Stop()
	select {
	case r := <-ch:
		if !r.ok {
			return r, errors.New(r.text)
		}
		return r, nil
	case <-ctx.Done():
		completions.drop(id)
		return opResult{}, ctx.Err()
	case <-limit.C:
		completions.drop(id)
		return opResult{}, errOpLimit
	}
}

// completions are the JavaScript operations Go is waiting for, by id.
var completions = &pendingOps{m: map[float64]chan opResult{}}

type opResult struct {
	ok   bool
	text string
	body []byte // fetch: the response body
	more bool   // fetch: the body went on past the cap
}

type pendingOps struct {
	mu   sync.Mutex
	next float64
	m    map[float64]chan opResult
}

func (p *pendingOps) add() (float64, chan opResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	ch := make(chan opResult, 1)
	p.m[p.next] = ch
	return p.next, ch
}

func (p *pendingOps) drop(id float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, id)
}

// registerComplete gives the shim complete(id, ok, text[, body, more]),
// which ends the operation id (a D1 statement or a fetch).
func registerComplete() {
	complete := js.FuncOf(func(_ js.Value, args []js.Value) any {
		id := args[0].Float()
		completions.mu.Lock()
		ch, ok := completions.m[id]
		delete(completions.m, id)
		completions.mu.Unlock()
		if !ok {
			return nil
		}
		r := opResult{ok: args[1].Bool(), text: args[2].String()}
		if len(args) > 4 && args[3].Type() == js.TypeObject {
			r.body = make([]byte, args[3].Length())
			js.CopyBytesToGo(r.body, args[3])
			r.more = args[4].Bool()
		}
		ch <- r
		return nil
	})
	runtimeContext.Get("binding").Set("complete", complete)
}
