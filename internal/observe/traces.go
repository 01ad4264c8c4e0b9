package observe

import (
	"context"
	"crypto/sha256"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/sqlstore"
)

// Tracing exports one OpenTelemetry span per stored receipt over OTLP/HTTP:
// a top-level call is a root span, a flow step or an agent's tool call the
// child of the call that made it. Span and trace ids are derived from the
// receipt's invocation id and rowcall trace id (the first 8 and 16 bytes of
// their SHA-256), so a parent and child link whichever receipt is stored
// first, and the span carries both ids as attributes to search by.
//
// Spans are made on Tracing's own goroutine, off the receipt writer's path: a
// receipt that finds its queue full (TraceQueue) is not traced.
type Tracing struct {
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	queue   chan rowcall.Receipt // never closed: Group may still send after Close
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	dropped atomic.Int64
}

// TraceQueue is how many stored receipts may wait to become spans.
const TraceQueue = 4096

// Settings naming the OTLP endpoint; tracing is off when none is set.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"        // the OpenTelemetry SDKs' own: base URL, /v1/traces is added
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" // the full URL of the traces endpoint
	EnvRowcall        = "ROWCALL_OTLP_ENDPOINT"              // rowcall's: the full URL, e.g. http://127.0.0.1:4318/v1/traces
)

// NewTracing starts tracing when lookup names an OTLP endpoint (EnvRowcall,
// else the OTEL_EXPORTER_OTLP_* variables, with the rest of them — headers,
// timeout, insecure — as the exporter reads them); nil, nil when none does.
func NewTracing(ctx context.Context, lookup func(string) string) (*Tracing, error) {
	var opts []otlptracehttp.Option
	switch {
	case lookup(EnvRowcall) != "":
		opts = append(opts, otlptracehttp.WithEndpointURL(lookup(EnvRowcall)))
	case lookup(EnvEndpoint) == "" && lookup(EnvTracesEndpoint) == "":
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(semconv.ServiceName("rowcall"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithIDGenerator(receiptIDs{}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t := &Tracing{tp: tp, tracer: tp.Tracer("github.com/rowcall/rowcall"), queue: make(chan rowcall.Receipt, TraceQueue),
		stop: make(chan struct{}), done: make(chan struct{})}
	go t.run()
	return t, nil
}

// run makes the queued receipts' spans until Close, then those still queued.
func (t *Tracing) run() {
	defer close(t.done)
	for {
		select {
		case rc := <-t.queue:
			t.span(&rc)
		case <-t.stop:
			for {
				select {
				case rc := <-t.queue:
					t.span(&rc)
				default:
					return
				}
			}
		}
	}
}

// Dropped is how many receipts found the queue full and were not traced.
func (t *Tracing) Dropped() int64 { return t.dropped.Load() }

// Close flushes the spans not yet sent and stops the exporter.
func (t *Tracing) Close(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.once.Do(func() { close(t.stop) })
	<-t.done
	return t.tp.Shutdown(ctx)
}

// Group queues a span for every stored receipt of one group commit, without
// waiting (after Close, what it queues is not traced).
func (t *Tracing) Group(g sqlstore.Group) {
	for i := range g.Receipts {
		if g.Errs[i] != nil {
			continue
		}
		select {
		case t.queue <- g.Receipts[i]:
		default:
			t.dropped.Add(1)
		}
	}
}

// Observer is Group as a receipt-writer observer, nil when tracing is off.
func (t *Tracing) Observer() func(sqlstore.Group) {
	if t == nil {
		return nil
	}
	return t.Group
}

// Attribute keys every span carries.
const (
	AttrTrace      = "rowcall.trace_id"
	AttrInvocation = "rowcall.invocation_id"
	AttrParent     = "rowcall.parent_invocation_id"
)

func (t *Tracing) span(rc *rowcall.Receipt) {
	start, err := time.Parse(rowcall.Timestamp, rc.StartedAt)
	if err != nil {
		return
	}
	tid := TraceID(rc.Trace)
	ctx := context.WithValue(context.Background(), spanKey{}, SpanID(rc.ID))
	if rc.Parent != "" {
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: tid, SpanID: SpanID(rc.Parent), TraceFlags: trace.FlagsSampled, Remote: true}))
	} else {
		ctx = context.WithValue(ctx, traceKey{}, tid)
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrTrace, rc.Trace), attribute.String(AttrInvocation, rc.ID),
		attribute.String("rowcall.key", rc.Key), attribute.String("rowcall.type", string(rc.Type)),
		attribute.String("rowcall.runner", rc.Runner), attribute.String("rowcall.outcome", rc.Outcome),
		attribute.String("rowcall.actor", rc.Actor), attribute.String("rowcall.contract_sha256", rc.Contract),
		attribute.Float64("rowcall.cost_usd", rc.CostUSD),
	}
	if rc.Parent != "" {
		attrs = append(attrs, attribute.String(AttrParent, rc.Parent))
	}
	if rc.TokenID != "" {
		attrs = append(attrs, attribute.String("rowcall.token_id", rc.TokenID))
	}
	if rc.Status != 0 {
		attrs = append(attrs, attribute.Int("rowcall.upstream_status", rc.Status))
	}
	kind := trace.SpanKindServer
	if rc.Parent != "" {
		kind = trace.SpanKindInternal
	}
	_, s := t.tracer.Start(ctx, rc.Key, trace.WithTimestamp(start), trace.WithAttributes(attrs...), trace.WithSpanKind(kind))
	if !rc.OK {
		s.SetStatus(codes.Error, rc.Outcome)
	}
	s.End(trace.WithTimestamp(start.Add(time.Duration(rc.Millis * float64(time.Millisecond)))))
}

// TraceID is the OpenTelemetry trace id of a rowcall trace (t_…).
func TraceID(trace string) trace.TraceID {
	sum := sha256.Sum256([]byte(trace))
	return [16]byte(sum[:16])
}

// SpanID is the OpenTelemetry span id of an invocation (inv_…).
func SpanID(invocation string) trace.SpanID {
	sum := sha256.Sum256([]byte(invocation))
	return [8]byte(sum[:8])
}

// receiptIDs gives a span the ids derived from its receipt, passed in the
// context span starts with.
type receiptIDs struct{}

type spanKey struct{}
type traceKey struct{}

func (receiptIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	tid, _ := ctx.Value(traceKey{}).(trace.TraceID)
	sid, _ := ctx.Value(spanKey{}).(trace.SpanID)
	return tid, sid
}

func (receiptIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	sid, _ := ctx.Value(spanKey{}).(trace.SpanID)
	return sid
}
