package main

import (
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
)

// startPprof serves Go's profiler on $ROWCALL_PPROF (e.g. 127.0.0.1:6060) when
// set, on its own listener, never on the API's.
func startPprof() {
	addr := os.Getenv("ROWCALL_PPROF")
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	go func() { slog.Info("pprof", "err", http.ListenAndServe(addr, mux)) }()
}
