package hostmain

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/rowcall/rowcall/internal/app"
	"github.com/rowcall/rowcall/internal/observe"
	"github.com/rowcall/rowcall/runners/fn"
)

// observe wires the host's telemetry to a's receipt writer: Prometheus
// metrics at /metrics (owner-only on the API's listener; keyless on
// metricsAddr when set) and OTLP traces when an endpoint is configured
// (observe.NewTracing). It returns the API's handler with /metrics in front,
// and what to close at shutdown.
func (m *Main) observe(ctx context.Context, a *app.App, fnRunner *fn.Runner) (http.Handler, func() error, error) {
	metricsAddr := m.MetricsAddr
	mx := observe.NewMetrics(observe.Sources{Breakers: a.Store.BreakerStates, Fn: fnRunner.Counts, MCPSyncs: func() []observe.MCPSync {
		var out []observe.MCPSync
		for _, s := range a.API.MCPSyncStatuses() {
			out = append(out, observe.MCPSync{Server: s.Server, Failing: s.Error != "", Failures: s.Failures})
		}
		return out
	}})
	t, err := observe.NewTracing(ctx, func(name string) string { v, _ := m.lookup(name); return v })
	if err != nil {
		return nil, nil, err
	}
	a.Receipts.Observe(observe.Each(mx.Group, t.Observer()))
	var srv *http.Server
	if metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", mx.Handler())
		srv = &http.Server{Addr: metricsAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.ListenAndServe(); err != http.ErrServerClosed {
				slog.Error("metrics listener", "addr", metricsAddr, "err", err)
			}
		}()
	}
	metrics := mx.Handler()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			a.Handler.ServeHTTP(w, r)
			return
		}
		if !a.API.Owner(r) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"unauthorized","message":"/metrics is the owner's","how_to_fix":"send the owner key as x-terminal-key or Authorization: Bearer, or serve keyless metrics on --metrics-addr"}` + "\n"))
			return
		}
		metrics.ServeHTTP(w, r)
	})
	closeAll := func() error {
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
		return nil
	}
	return h, closeAll, nil
}
