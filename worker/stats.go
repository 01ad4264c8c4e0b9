//go:build js && wasm

package main

import (
	"encoding/json"
	"net/http"
	"runtime"
	"time"

	"github.com/rowcall/rowcall/api"
)

// The worker's own endpoints, beside the API, for the owner:
//
//	GET  /_worker/stats   this Go instance: which one the isolate is on (1 unless
//	                      one died), when it started, how many requests it has
//	                      served, and the fn runner's module loads by digest
//	                      (a load is a compile: see countingSource), and D1's
//	                      account: rows read and written in all and for each of
//	                      the last requests, and the newest bookmark seen
//	                      (d1session.go).
//	POST /_worker/reindex?after=KEY&limit=N&force=1
//	                      embed the rows with no current vector in Vectorize,
//	                      up to N (500) rows after KEY in key order a call
//	                      (vectorsync.go): {checked, embedded, next}; call
//	                      again with after=next until next is absent.
//	POST /_worker/crash   only with ROWCALL_WORKER_DEBUG=1: kill this Go
//	                      instance (a panic outside any handler), so tests can
//	                      watch the shim start a fresh one on the next request.
func (inst *instance) serveWorker(a *served, w http.ResponseWriter, r *http.Request) {
	if !a.isOwner(r) {
		api.Unauthorized(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/_worker/stats":
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		json.NewEncoder(w).Encode(map[string]any{
			"instance":        inst.number,
			"started":         inst.started.UTC().Format(time.RFC3339Nano),
			"requests":        inst.requests.Load(),
			"settings_reads":  inst.settingsReads.Load(),
			"fn_runner":       inst.fn.started.Load(),
			"fn_module_loads": inst.fn.src.counts(),
			"examples":        a.seeder.report(),
			"d1":              d1ledger.snapshot(),
			"vectors":         a.vectorsReport(),
			"go": map[string]any{"heap_bytes": ms.HeapAlloc, "sys_bytes": ms.Sys, "gc_cycles": ms.NumGC,
				"gc_pause_ms": float64(ms.PauseTotalNs) / 1e6, "goroutines": runtime.NumGoroutine()},
		})
	case r.Method == http.MethodPost && r.URL.Path == "/_worker/reindex":
		a.serveReindex(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/_worker/nearest" && a.settings.debug:
		a.serveNearest(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/_worker/crash" && a.settings.debug:
		go func() { panic("rowcall: POST /_worker/crash (ROWCALL_WORKER_DEBUG=1)") }()
		select {} // the program ends before this request can be answered
	default:
		w.WriteHeader(http.StatusNotFound)
		w.Write(jsonObject("error", "not_found", "message", r.Method+" "+r.URL.Path+" is not a worker endpoint"))
	}
}
