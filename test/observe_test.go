package test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/rowcall/rowcall/internal/observe"
	wasmexamples "github.com/rowcall/rowcall/wasm/examples"
)

// otlpReceiver is an OTLP/HTTP traces endpoint on loopback that decodes what
// the host exports (protobuf ExportTraceServiceRequest) and keeps the spans.
type otlpReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func startOTLP(t *testing.T) *otlpReceiver {
	o := &otlpReceiver{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
			t.Errorf("OTLP request %s %s %q", r.URL.Path, r.Header.Get("Content-Type"), body)
			w.WriteHeader(400)
			return
		}
		o.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				o.spans = append(o.spans, ss.Spans...)
			}
		}
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	t.Cleanup(o.Close)
	return o
}

// waitSpans waits for at least n spans (the exporter sends them in batches).
func (o *otlpReceiver) waitSpans(t *testing.T, n int) []*tracepb.Span {
	deadline := time.Now().Add(30 * time.Second)
	for {
		o.mu.Lock()
		got := append([]*tracepb.Span(nil), o.spans...)
		o.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// scrape reads /metrics in Prometheus's text format.
func scrape(t *testing.T, url string, header map[string]string) map[string]*dto.MetricFamily {
	t.Helper()
	r, _ := http.NewRequest("GET", url, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return fams
}

// sample is the value of the family's sample whose labels include want
// (a counter's or gauge's value, a histogram's count); -1 when there is none.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// The host's /metrics counts what the receipts record — calls by row, type
// and outcome, runner latencies, limit refusals, group commits, breakers, fn
// counts — owner-only on the API's listener and keyless on --metrics-addr;
// with an OTLP endpoint set, every receipt is a span, nested steps the
// children of their call, carrying the rowcall trace and invocation ids.
func TestObserveMetricsAndTraces(t *testing.T) {
	otlp := startOTLP(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/deny" {
			w.WriteHeader(401)
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	}))
	t.Cleanup(up.Close)
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	h := startHost(t, append(append([]string{}, allowLoopback...), "--metrics-addr", metricsAddr),
		"ROWCALL_OTLP_ENDPOINT="+otlp.URL+"/v1/traces", "OTEL_BSP_SCHEDULE_DELAY=50")
	createRow(t, h, map[string]any{"key": "OBS_HTTP", "type": "http", "target": "GET " + up.URL + "/ok?q=$1"})
	createRow(t, h, map[string]any{"key": "OBS_DENY", "type": "http", "target": "GET " + up.URL + "/deny"})
	createRow(t, h, map[string]any{"key": "OBS_FLOW", "type": "flow", "content": "# WHAT: two steps\nOBS_HTTP: a\n> OBS_HTTP: b"})

	expect(t, dispatchCall(t, h, "OBS_HTTP", "1"), 200, map[string]any{"ok": true})
	expect(t, dispatchCall(t, h, "OBS_HTTP", "2"), 200, map[string]any{"ok": true})
	flowCall := dispatchCall(t, h, "OBS_FLOW", "")
	expect(t, flowCall, 200, map[string]any{"ok": true})
	expect(t, dispatchCall(t, h, "OBS_DENY", ""), 200, map[string]any{"ok": false})
	secret, _, _ := mint(t, h, map[string]any{"keys": []string{"OBS_HTTP"}, "rate": "1/hour"})
	expect(t, tokenCall(t, h, secret, "OBS_HTTP", "3"), 200, map[string]any{"ok": true})
	expect(t, tokenCall(t, h, secret, "OBS_HTTP", "4"), 429, map[string]any{"error": "rate_limited:1/hour"})

	// fn: registering a module compiles it; each call starts one instance of the compiled module.
	echo, _ := wasmexamples.ByName("echo")
	expect(t, h.do(t, req{Method: "PUT", Path: "/api/modules/obs_echo", Body: echo.Wasm, Header: map[string]string{"Content-Type": "application/wasm"}}), 200, nil)
	createRow(t, h, map[string]any{"key": "OBS_FN", "type": "fn", "target": "obs_echo", "content": "# WHAT: echo\n[\"$1\"]"})
	before := scrape(t, h.URL+"/metrics", map[string]string{"X-Terminal-Key": h.Key})
	expect(t, dispatchCall(t, h, "OBS_FN", "x"), 200, map[string]any{"ok": true, "result": "x"})
	expect(t, dispatchCall(t, h, "OBS_FN", "y"), 200, map[string]any{"ok": true, "result": "y"})
	const receipts = 10 // 2 + the flow and its 2 steps + the denied call + the token's 2 + the fn's 2

	// The API's /metrics is the owner's.
	if got := h.do(t, req{Method: "GET", Path: "/metrics", NoAuth: true}); got.Status != 401 || got.JSON["error"] != "unauthorized" {
		t.Fatalf("keyless /metrics on the API's listener: %d %s", got.Status, got.Raw)
	}
	owner := scrape(t, h.URL+"/metrics", map[string]string{"X-Terminal-Key": h.Key})
	keyless := scrape(t, "http://"+metricsAddr+"/metrics", nil)
	for _, fams := range []map[string]*dto.MetricFamily{owner, keyless} {
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"rowcall_calls_total", map[string]string{"key": "OBS_HTTP", "type": "http", "outcome": "ok"}, 5},
			{"rowcall_calls_total", map[string]string{"key": "OBS_FLOW", "type": "flow", "outcome": "ok"}, 1},
			{"rowcall_calls_total", map[string]string{"key": "OBS_DENY", "type": "http", "outcome": "failed"}, 1},
			{"rowcall_calls_total", map[string]string{"key": "OBS_HTTP", "type": "http", "outcome": "refused"}, 1},
			{"rowcall_limit_refusals_total", map[string]string{"reason": "rate_limited"}, 1},
			{"rowcall_call_duration_seconds", map[string]string{"runner": "http"}, 6},
			{"rowcall_call_duration_seconds", map[string]string{"runner": "flow"}, 1},
			{"rowcall_breaker_failures", map[string]string{"key": "OBS_DENY"}, 1},
			{"rowcall_breaker_open", map[string]string{"key": "OBS_DENY"}, 0},
			{"rowcall_fn_compiles_total", nil, sample(before, "rowcall_fn_compiles_total", nil)},
			{"rowcall_fn_instances_total", nil, sample(before, "rowcall_fn_instances_total", nil) + 2},
			{"rowcall_call_duration_seconds", map[string]string{"runner": "fn"}, 2},
		} {
			if got := sample(fams, c.name, c.labels); got != c.want {
				t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
			}
		}
		var stored float64
		for _, m := range fams["rowcall_receipt_group_size"].GetMetric() {
			stored = m.Histogram.GetSampleSum()
		}
		if stored != receipts || sample(fams, "rowcall_receipt_commit_seconds", nil) < 1 {
			t.Errorf("receipt groups: %v receipts stored, want %d", stored, receipts)
		}
		if waits := sample(fams, "rowcall_receipt_wait_seconds", nil); waits != receipts {
			t.Errorf("rowcall_receipt_wait_seconds counts %v receipts' waits, want one for each of the %d stored", waits, receipts)
		}
	}

	// Spans: one per receipt; the flow's two steps are its children.
	spans := otlp.waitSpans(t, receipts)
	if sample(before, "rowcall_fn_compiles_total", nil) < 1 {
		t.Errorf("registering a module compiled nothing: %v", sample(before, "rowcall_fn_compiles_total", nil))
	}
	if len(spans) != receipts {
		t.Fatalf("%d spans, want %d", len(spans), receipts)
	}
	flowID, trace := proof(t, flowCall)["invocation_id"].(string), flowCall.JSON["trace"].(string)
	var root *tracepb.Span
	var children []*tracepb.Span
	for _, s := range spans {
		switch {
		case spanAttr(s, observe.AttrInvocation) == flowID:
			root = s
		case spanAttr(s, observe.AttrParent) == flowID:
			children = append(children, s)
		}
	}
	if root == nil || len(children) != 2 {
		t.Fatalf("flow span %v, %d children", root, len(children))
	}
	wantTrace := observe.TraceID(trace)
	if root.Name != "OBS_FLOW" || len(root.ParentSpanId) != 0 || !bytes.Equal(root.TraceId, wantTrace[:]) || spanAttr(root, observe.AttrTrace) != trace {
		t.Fatalf("flow span %s parent %x trace %x %q", root.Name, root.ParentSpanId, root.TraceId, spanAttr(root, observe.AttrTrace))
	}
	for _, c := range children {
		if c.Name != "OBS_HTTP" || !bytes.Equal(c.ParentSpanId, root.SpanId) || !bytes.Equal(c.TraceId, root.TraceId) ||
			spanAttr(c, observe.AttrTrace) != trace || !strings.HasPrefix(spanAttr(c, observe.AttrInvocation), "inv_") ||
			c.StartTimeUnixNano < root.StartTimeUnixNano || c.EndTimeUnixNano > root.EndTimeUnixNano+uint64(time.Millisecond) {
			t.Fatalf("step span %s parent %s (flow %s) trace %s", c.Name, hex.EncodeToString(c.ParentSpanId), hex.EncodeToString(root.SpanId), hex.EncodeToString(c.TraceId))
		}
	}
	var refusedSpan bool
	for _, s := range spans {
		if spanAttr(s, "rowcall.outcome") == "refused:rate_limited:1/hour" && s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			refusedSpan = true
		}
	}
	if !refusedSpan {
		t.Fatal("no span for the refused call")
	}
}
