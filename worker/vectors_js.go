//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"syscall/js"

	"github.com/rowcall/rowcall"
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

// serveReindex answers POST /_worker/reindex?after=KEY&limit=N&force=1: one
// page of the reindex (vectorSync.reindex).
func (a *served) serveReindex(w http.ResponseWriter, r *http.Request) {
	if a.sync == nil {
		w.WriteHeader(http.StatusNotFound)
		w.Write(jsonObject("error", "not_configured", "message", "the worker has no AI or no VECTORIZE binding: there is no Vectorize index to reindex",
			"how_to_fix", "bind Workers AI as AI and a Vectorize index as VECTORIZE (docs/vectors.md)"))
		return
	}
	q := r.URL.Query()
	limit := 0
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			w.WriteHeader(http.StatusBadRequest)
			w.Write(jsonObject("error", "invalid_request", "message", "limit "+strconv.Quote(l)+" is not a positive whole number",
				"how_to_fix", "give limit from 1 to 500, or leave it out for 500"))
			return
		}
		limit = n
	}
	rep, err := a.sync.reindex(r.Context(), q.Get("after"), limit, rowcall.SettingOn(q.Get("force")))
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		w.Write(jsonObject("error", "upstream", "message", err.Error(),
			"how_to_fix", "check the AI and VECTORIZE bindings (GET /_worker/stats shows the last error), then call again with the same after="))
		return
	}
	json.NewEncoder(w).Encode(rep)
}
