//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"syscall/js"
)

// jsBinder reaches a binding of the request ctx belongs to through the shim's
// call helper (build/shim/worker.mjs): call(id, binding, method, args) runs
// binding[method](...JSON.parse(args)) and answers JSON.stringify of what it
// resolves to, through complete (ops.go), like the d1 and r2 helpers.
type jsBinder struct{}

var shimCall = runtimeContext.Get("call")

func (jsBinder) call(ctx context.Context, binding, method string, args ...any) ([]byte, error) {
	h, err := handleFrom(ctx)
	if err != nil {
		return nil, err
	}
	b := h.env.Get(binding)
	if b.Type() != js.TypeObject {
		return nil, fmt.Errorf("the worker has no binding named %s", binding)
	}
	enc, err := encodeArgs(args)
	if err != nil {
		return nil, err
	}
	r, err := shimOp(ctx, shimCall, b, method, string(enc))
	if err != nil {
		return nil, err
	}
	return []byte(r.text), nil
}

// vectorsReport is the vectors' part of GET /_worker/stats.
func (a *served) vectorsReport() map[string]any {
	out := map[string]any{"ai": a.embedder != nil, "vectorize": a.vectors != nil}
	if a.embedder != nil {
		out["model"] = a.embedder.Model().ID()
	}
	if a.sync != nil {
		out["sync"] = a.sync.snapshot()
	}
	return out
}

// serveNearest answers POST /_worker/nearest {text, k, all}: the rows
// nearest text by the Embedder and VectorIndex alone.
func (a *served) serveNearest(w http.ResponseWriter, r *http.Request) {
	var q nearestRequest
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil || q.Text == "" {
		w.WriteHeader(http.StatusBadRequest)
		w.Write(jsonObject("error", "invalid_request", "message", "POST /_worker/nearest takes {\"text\": …, \"k\": 5, \"all\": false}"))
		return
	}
	if a.embedder == nil || a.vectors == nil {
		w.WriteHeader(http.StatusNotFound)
		w.Write(jsonObject("error", "not_configured", "message", "the worker has no AI or no VECTORIZE binding"))
		return
	}
	out, err := nearest(r.Context(), a.embedder, a.vectors, q)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		w.Write(jsonObject("error", "upstream", "message", err.Error()))
		return
	}
	json.NewEncoder(w).Encode(out)
}
