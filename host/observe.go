package main

import (
	"context"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/rowcall/rowcall/api"
	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/observe"
	"github.com/rowcall/rowcall/runners/fn"
)

// observeFlags adds serve's telemetry flag: where /metrics is served without
// a key (by default it is on the API's listener, for the owner only).
func observeFlags(fs *flag.FlagSet) (metricsAddr *string) {
	metricsAddr = fs.String("metrics-addr", "", "also serve Prometheus metrics at /metrics on this address, without a key (e.g. 127.0.0.1:9464); the API's /metrics takes the owner key")
	if err := envFlags(fs, map[string]string{"metrics-addr": "ROWCALL_METRICS_ADDR"}); err != nil {
		panic(err)
	}
	return metricsAddr
}

// observeHost wires the host's telemetry to a's receipt writer: Prometheus
// metrics at /metrics (owner-only on the API's listener; keyless on
// metricsAddr when set) and OTLP traces when an endpoint is configured
// (observe.NewTracing). It returns the API's handler with /metrics in front,
// and what to close at shutdown.
func observeHost(ctx context.Context, a *app.App, fnRunner *fn.Runner, ownerKeys func() []string, metricsAddr string) (http.Handler, func(), error) {
	m := observe.NewMetrics(observe.Sources{Breakers: a.Store.BreakerStates, Fn: fnRunner.Counts})
	t, err := observe.NewTracing(ctx, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	a.Receipts.Observe(observe.Each(m.Group, t.Observer()))
	var srv *http.Server
	if metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.Handler())
		srv = &http.Server{Addr: metricsAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.ListenAndServe(); err != http.ErrServerClosed {
				slog.Error("metrics listener", "addr", metricsAddr, "err", err)
			}
		}()
	}
	metrics := m.Handler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			a.Handler.ServeHTTP(w, r)
			return
		}
		if !api.IsOwner(r, ownerKeys()) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"unauthorized","message":"/metrics is the owner's","how_to_fix":"send the owner key as x-terminal-key or Authorization: Bearer, or serve keyless metrics on --metrics-addr"}` + "\n"))
			return
		}
		metrics.ServeHTTP(w, r)
	})
	closeAll := func() {
		a.Receipts.Observe(nil)
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if srv != nil {
			srv.Shutdown(sctx)
		}
		if err := t.Close(sctx); err != nil {
			slog.Error("traces: flush at shutdown", "err", err)
		}
		if t != nil && t.Dropped() > 0 {
			slog.Warn("traces: receipts not traced (the span queue was full)", "receipts", t.Dropped())
		}
	}
	return h, closeAll, nil
}
