// Package tracing gives a write's life one OpenTelemetry trace: the
// proposal, the decision, the permit, the send with its read-back, and a
// reconciliation are spans of the invocation's own trace, whose id is
// derived from the invocation's id. Its stages happen in different
// requests, loops and console instances, hours apart, and none stores a
// context for the next: each finds the trace again from the id. Every
// request to a business system is a client span carrying its traceparent
// (Transport), and a system that is traced too (Handler) continues it, so
// its own work shows under the console's. Nothing is traced until Install
// (or FromEnv, with an OTLP endpoint) sets a provider; until then every
// call here is a no-op.
package tracing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Attribute keys every span of a write carries.
const (
	InvocationID = attribute.Key("countersign.invocation.id")
	TaskID       = attribute.Key("countersign.task.id")
)

// current is the installed tracer provider; nil traces nothing.
var current atomic.Pointer[sdktrace.TracerProvider]

// Install makes tp the provider of every span here (nil turns tracing off).
// A provider made with NewProvider gives each write's proposal span the
// write's own trace and span ids, so the later stages are its children.
func Install(tp *sdktrace.TracerProvider) { current.Store(tp) }

// NewProvider is a tracer provider exporting to exp, in batches unless
// sync (tests), with the ids a write's trace needs.
func NewProvider(exp sdktrace.SpanExporter, sync bool, opts ...sdktrace.TracerProviderOption) *sdktrace.TracerProvider {
	proc := sdktrace.NewBatchSpanProcessor(exp)
	if sync {
		proc = sdktrace.NewSimpleSpanProcessor(exp)
	}
	opts = append([]sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(proc), sdktrace.WithIDGenerator(writeIDs{})}, opts...)
	return sdktrace.NewTracerProvider(opts...)
}

func tracer() trace.Tracer {
	if tp := current.Load(); tp != nil {
		return tp.Tracer("countersign")
	}
	return noop.NewTracerProvider().Tracer("countersign")
}

// WriteTrace is the span context of an invocation's proposal span: the
// trace id and span id are the first 24 bytes of SHA-256 of the id.
func WriteTrace(invocationID string) trace.SpanContext {
	sum := sha256.Sum256([]byte("countersign write " + invocationID))
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], sum[:16])
	copy(sid[:], sum[16:24])
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
}

// Stage starts the span of one stage of an invocation's write ("send",
// "decide", …), named countersign.<stage>, with kv's attributes (see
// attributes): a child of the span in ctx when that is already in the
// write's trace (verify inside send), else of the write's proposal span.
// End it.
func Stage(ctx context.Context, stage, invocationID, taskID string, kv ...string) (context.Context, trace.Span) {
	if current.Load() == nil {
		return ctx, trace.SpanFromContext(context.Background())
	}
	root := WriteTrace(invocationID)
	if trace.SpanContextFromContext(ctx).TraceID() != root.TraceID() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, root)
	}
	attrs := attributes(invocationID, taskID, kv)
	return tracer().Start(ctx, "countersign."+stage, trace.WithAttributes(attrs...))
}

// Start starts the span of work that belongs to no write yet, named
// countersign.<stage> with kv's attributes: a proposal's resolve and dry
// run, before its id exists. It is a child of the span in ctx, else the
// root of a trace of its own, which the write's proposal span then links
// (Proposed). End it.
func Start(ctx context.Context, stage string, kv ...string) (context.Context, trace.Span) {
	if current.Load() == nil {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return tracer().Start(ctx, "countersign."+stage, trace.WithAttributes(pairs(nil, kv)...))
}

// Done records a stage that already happened, from began until now, as
// Stage would have (a permit is decided inside a transaction that may run
// twice; it is traced once, after it committed).
func Done(ctx context.Context, stage, invocationID, taskID string, began time.Time, kv ...string) {
	if current.Load() == nil {
		return
	}
	root := WriteTrace(invocationID)
	if trace.SpanContextFromContext(ctx).TraceID() != root.TraceID() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, root)
	}
	attrs := attributes(invocationID, taskID, kv)
	_, span := tracer().Start(ctx, "countersign."+stage, trace.WithTimestamp(began), trace.WithAttributes(attrs...))
	span.End()
}

// Proposed records a write's proposal, from began until now, as the root of
// the write's trace: its ids are WriteTrace's, which the stages after it
// take for their parent. The proposal's id is known only once it is
// stored, hence after the fact.
func Proposed(ctx context.Context, invocationID, taskID string, began time.Time, kv ...string) {
	if current.Load() == nil {
		return
	}
	attrs := attributes(invocationID, taskID, kv)
	// Links keep the request it was proposed in, whose trace it leaves.
	var links []trace.Link
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		links = append(links, trace.Link{SpanContext: sc})
	}
	_, span := tracer().Start(context.WithValue(ctx, writeKey{}, invocationID), "countersign.propose", trace.WithNewRoot(),
		trace.WithTimestamp(began), trace.WithAttributes(attrs...), trace.WithLinks(links...))
	span.End()
}

// attributes are a write's span attributes: its ids, then kv's pairs.
func attributes(invocationID, taskID string, kv []string) []attribute.KeyValue {
	return pairs([]attribute.KeyValue{InvocationID.String(invocationID), TaskID.String(taskID)}, kv)
}

// pairs appends kv's pairs (key, value, key, value…) to attrs under
// countersign.<key>.
func pairs(attrs []attribute.KeyValue, kv []string) []attribute.KeyValue {
	for i := 0; i+1 < len(kv); i += 2 {
		attrs = append(attrs, attribute.String("countersign."+kv[i], kv[i+1]))
	}
	return attrs
}

// Outcome notes on the span in ctx what state the stage left the
// invocation in.
func Outcome(ctx context.Context, state string) {
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("countersign.state", state))
}

// writeKey marks the context of a write's proposal span for writeIDs.
type writeKey struct{}

// writeIDs gives a write's proposal span the ids WriteTrace derives, and
// every other span random ones.
type writeIDs struct{}

func (writeIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if id, ok := ctx.Value(writeKey{}).(string); ok {
		sc := WriteTrace(id)
		return sc.TraceID(), sc.SpanID()
	}
	var tid trace.TraceID
	_, _ = rand.Read(tid[:])
	return tid, writeIDs{}.NewSpanID(ctx, tid)
}

func (writeIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	_, _ = rand.Read(sid[:])
	return sid
}
