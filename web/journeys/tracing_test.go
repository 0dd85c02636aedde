package journeys_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/internal/controlplane"
	"countersign/web/webtest"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"countersign/internal/accounts"
	"countersign/internal/tracing"
)

func all(l *webtest.HeaderLog) []http.Header {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	return slices.Clone(l.Got)
}

// TestAWriteIsOneTrace follows a refund from its proposal over the API
// through an agent's approval to its send and read-back: each stage is a
// span of one trace, whose root is the proposal and whose id comes from the
// invocation's, with the invocation and task ids on every span; the shop
// is sent the traceparent of the send's request, a client span under it.
func TestAWriteIsOneTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tracing.Install(tracing.NewProvider(exp, true))
	t.Cleanup(func() { tracing.Install(nil) })
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()

	id := b.ProposeRefund(t, b.DamagedOrder(t))
	inv := b.Invocation(t, id)
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(), InvocationID: id, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	before := len(all(b.ShopHeaders))
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := b.Invocation(t, id); got.State != "completed" {
		t.Fatalf("state %s, want completed", got.State)
	}

	root := tracing.WriteTrace(id)
	var spans []sdktrace.ReadOnlySpan
	for _, s := range exp.GetSpans().Snapshots() {
		for _, kv := range s.Attributes() {
			if kv.Key == tracing.InvocationID && kv.Value.AsString() == id {
				spans = append(spans, s)
			}
		}
	}
	byName := map[string]sdktrace.ReadOnlySpan{}
	var tree []string
	for _, s := range spans {
		byName[s.Name()] = s
		if s.SpanContext().TraceID() != root.TraceID() {
			t.Errorf("%s is in trace %s, not the write's %s", s.Name(), s.SpanContext().TraceID(), root.TraceID())
		}
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		if attrs[string(tracing.TaskID)] != b.TaskID() {
			t.Errorf("%s has task id %q, want %s", s.Name(), attrs[string(tracing.TaskID)], b.TaskID())
		}
		tree = append(tree, fmt.Sprintf("%s span=%s parent=%s %s %v", s.Name(), s.SpanContext().SpanID(), s.Parent().SpanID(), s.EndTime().Sub(s.StartTime()).Round(time.Microsecond), attrs))
	}
	t.Logf("spans of %s:\n%s", id, strings.Join(tree, "\n"))
	for _, name := range []string{"countersign.propose", "countersign.decide", "countersign.permit", "countersign.send", "countersign.verify"} {
		if byName[name] == nil {
			t.Errorf("no %s span", name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if p := byName["countersign.propose"]; p.SpanContext().SpanID() != root.SpanID() || p.Parent().IsValid() {
		t.Errorf("the proposal span is %s under %s, want the root %s", p.SpanContext().SpanID(), p.Parent().SpanID(), root.SpanID())
	}
	for _, name := range []string{"countersign.decide", "countersign.permit", "countersign.send"} {
		if got := byName[name].Parent().SpanID(); got != root.SpanID() {
			t.Errorf("%s's parent is %s, want the proposal %s", name, got, root.SpanID())
		}
	}
	send := byName["countersign.send"]
	if got := byName["countersign.verify"].Parent().SpanID(); got != send.SpanContext().SpanID() {
		t.Errorf("verify's parent is %s, want send %s", got, send.SpanContext().SpanID())
	}

	// The shop was sent the trace: the send's request is a client span
	// under the send, and its traceparent names that span.
	clients := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range exp.GetSpans().Snapshots() {
		if s.SpanKind() == trace.SpanKindClient {
			clients[s.SpanContext().SpanID()] = s
		}
	}
	var sent []trace.SpanContext
	for _, h := range all(b.ShopHeaders)[before:] {
		sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(h)))
		if sc.IsValid() {
			sent = append(sent, sc)
		}
	}
	if !slices.ContainsFunc(sent, func(sc trace.SpanContext) bool {
		c := clients[sc.SpanID()]
		return c != nil && c.Parent().SpanID() == send.SpanContext().SpanID() && sc.IsSampled()
	}) {
		t.Errorf("the shop was sent traceparents %v, none of a request span under the send span %s", sent, send.SpanContext().SpanID())
	}
}
