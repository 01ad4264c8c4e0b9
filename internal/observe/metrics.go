// Package observe is the local host's telemetry: Prometheus metrics and
// OpenTelemetry traces, both taken from the receipts the engine writes, so
// they count exactly what the receipt chain records (a call, a nested step, a
// refusal at the gate). Metrics are counted on the receipt writer's goroutine
// before the group's callers are answered (a scrape after an answer sees its
// call; a fraction of a microsecond per receipt); spans are made on Tracing's
// own goroutine. The worker does not import this package (it would add the
// two libraries to app.wasm).
//
//	m := observe.NewMetrics(observe.Sources{Breakers: store.BreakerStates, Fn: fnRunner.Counts})
//	t, _ := observe.NewTracing(ctx, os.Getenv)      // nil when no OTLP endpoint is set
//	receipts.Observe(observe.Each(m.Group, t.Group)) // sqlstore.ReceiptLog
//	mux.Handle("/metrics", m.Handler())
package observe

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/sqlstore"
)

// Sources are what the metrics read when scraped: the breakers' states, the
// fn runner's counts and the MCP servers' syncs (any may be nil).
type Sources struct {
	Breakers func(ctx context.Context, now time.Time) ([]sqlstore.BreakerState, error)
	Fn       func() (compiles, instances int64)
	MCPSyncs func() []MCPSync
}

// MCPSync is how one MCP server's syncs went (api.Handler.MCPSyncStatuses).
type MCPSync struct {
	Server   string
	Failing  bool  // the last sync could not list the server's tools
	Failures int64 // failed syncs since the host started
}

// Metrics are the host's Prometheus metrics, on their own registry.
type Metrics struct {
	reg           *prometheus.Registry
	calls         *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	limitRefusals *prometheus.CounterVec
	groupSize     prometheus.Histogram
	commit        prometheus.Histogram
	wait          prometheus.Histogram
	unstored      prometheus.Counter
}

// NewMetrics registers every metric (and Go's and the process's own).
func NewMetrics(src Sources) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rowcall_calls_total",
			Help: "Receipted calls (top-level and nested) by row key, row type and outcome (ok, failed, refused)."},
			[]string{"key", "type", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rowcall_call_duration_seconds",
			Help: "Duration of calls that reached a runner, by runner.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)},
			[]string{"runner"}),
		limitRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rowcall_limit_refusals_total",
			Help: "Calls refused by a token's limits: rate_limited or budget_exhausted."}, []string{"reason"}),
		groupSize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rowcall_receipt_group_size",
			Help: "Receipts the writer signed and stored in one group commit.", Buckets: prometheus.ExponentialBuckets(1, 2, 10)}),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rowcall_receipt_commit_seconds",
			Help: "Time one group commit took (signing and INSERTs).", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "rowcall_receipt_wait_seconds",
			Help: "Time from a receipt being queued to it being stored: what a call waits for the writer before it is answered.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 14)}),
		unstored: prometheus.NewCounter(prometheus.CounterOpts{Name: "rowcall_receipts_unstored_total",
			Help: "Receipts the writer could not store (or dropped as stale speculation)."}),
	}
	m.reg.MustRegister(m.calls, m.latency, m.limitRefusals, m.groupSize, m.commit, m.wait, m.unstored,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.Breakers != nil {
		m.reg.MustRegister(breakers(src.Breakers))
	}
	if src.Fn != nil {
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rowcall_fn_compiles_total", Help: "fn modules compiled (from the on-disk cache or not)."},
				func() float64 { c, _ := src.Fn(); return float64(c) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "rowcall_fn_instances_total", Help: "fn module instances started (one per call)."},
				func() float64 { _, n := src.Fn(); return float64(n) }))
	}
	if src.MCPSyncs != nil {
		m.reg.MustRegister(mcpSyncs(src.MCPSyncs))
	}
	return m
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Group counts one group commit and every receipt in it that was stored.
func (m *Metrics) Group(g sqlstore.Group) {
	m.groupSize.Observe(float64(len(g.Receipts)))
	m.commit.Observe(g.Took.Seconds())
	for _, w := range g.Waited {
		m.wait.Observe(w.Seconds())
	}
	for i := range g.Receipts {
		if g.Errs[i] != nil {
			m.unstored.Inc()
			continue
		}
		rc := &g.Receipts[i]
		m.calls.WithLabelValues(rc.Key, string(rc.Type), Outcome(rc)).Inc()
		if reason, ok := strings.CutPrefix(rc.Outcome, "refused:"); ok {
			if code, _, _ := strings.Cut(reason, ":"); code == string(rowcall.ERateLimited) || code == string(rowcall.EBudgetExhausted) {
				m.limitRefusals.WithLabelValues(code).Inc()
			}
			continue
		}
		m.latency.WithLabelValues(rc.Runner).Observe(rc.Millis / 1000)
	}
}

// Outcome is a receipt's outcome as a metric's label: ok, failed (an ERR:
// result) or refused (at the gate) — three values, where the receipt's own
// outcome carries the detail.
func Outcome(rc *rowcall.Receipt) string {
	switch {
	case strings.HasPrefix(rc.Outcome, "refused:"):
		return "refused"
	case rc.OK:
		return "ok"
	}
	return "failed"
}

// breakerCollector reads the breakers when scraped.
type breakerCollector struct {
	states         func(ctx context.Context, now time.Time) ([]sqlstore.BreakerState, error)
	open, failures *prometheus.Desc
}

func breakers(states func(ctx context.Context, now time.Time) ([]sqlstore.BreakerState, error)) prometheus.Collector {
	return &breakerCollector{states: states,
		open:     prometheus.NewDesc("rowcall_breaker_open", "1 while a row's breaker is open (its credential refused 8 times running).", []string{"key"}, nil),
		failures: prometheus.NewDesc("rowcall_breaker_failures", "A row's consecutive auth failures (401/403) on record.", []string{"key"}, nil)}
}

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.open; ch <- c.failures }

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := c.states(ctx, time.Now())
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.open, err)
		return
	}
	for _, b := range list {
		open := 0.0
		if b.Open {
			open = 1
		}
		ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, open, b.Key)
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(b.Failures), b.Key)
	}
}

// syncCollector reads the MCP servers' syncs when scraped.
type syncCollector struct {
	syncs             func() []MCPSync
	failing, failures *prometheus.Desc
}

func mcpSyncs(syncs func() []MCPSync) prometheus.Collector {
	return &syncCollector{syncs: syncs,
		failing:  prometheus.NewDesc("rowcall_mcp_sync_failing", "1 while an MCP server's last sync could not list its tools (its rows' drift goes uncaught).", []string{"server"}, nil),
		failures: prometheus.NewDesc("rowcall_mcp_sync_failures_total", "MCP server syncs that could not list the server's tools, since the host started.", []string{"server"}, nil)}
}

func (c *syncCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.failing; ch <- c.failures }

func (c *syncCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.syncs() {
		failing := 0.0
		if s.Failing {
			failing = 1
		}
		ch <- prometheus.MustNewConstMetric(c.failing, prometheus.GaugeValue, failing, s.Server)
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(s.Failures), s.Server)
	}
}

// Each returns a receipt-writer observer that calls every non-nil f in turn.
func Each(fs ...func(sqlstore.Group)) func(sqlstore.Group) {
	var list []func(sqlstore.Group)
	for _, f := range fs {
		if f != nil {
			list = append(list, f)
		}
	}
	return func(g sqlstore.Group) {
		for _, f := range list {
			f(g)
		}
	}
}
