package journeys_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/tracing"
	"countersign/internal/tracing/tracingtest"
	"countersign/web/webtest"
)

// TestATraceShowsTheShopsSide: the console and the demo shop both export
// to one OTLP/HTTP collector (as they do inside make run, from the
// OTEL_EXPORTER_OTLP_* variables), and the collector holds, for a
// refund's dry run, its send and the send's read-back, the console's
// client span and, under it in the same trace, the shop's server span
// named after its route; the send's with the shop's transaction and
// ledger write beneath. The dry run, made before the write has an id, is
// a trace of its own that the write's proposal links.
func TestATraceShowsTheShopsSide(t *testing.T) {
	collector := tracingtest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	_, stopConsole := tracing.FromEnv()
	t.Cleanup(func() { tracing.Install(nil) })
	shopTracing, _ := tracing.ServiceFromEnv("demoshop")
	b := webtest.New(t, webtest.WithShop(), webtest.WithShopTracing(shopTracing), webtest.WithAssistant())
	ctx := context.Background()

	id := b.ProposeRefund(t, b.DamagedOrder(t))
	inv := b.Invocation(t, id)
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(), InvocationID: id, Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got := b.Invocation(t, id); got.State != "completed" {
		t.Fatalf("state %s, want completed", got.State)
	}
	if err := stopConsole(ctx); err != nil {
		t.Fatal(err)
	}
	if err := shopTracing.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	spans := collector.Spans()
	write := tracing.WriteTrace(id).TraceID().String()
	named := map[string]tracingtest.Span{}
	for _, s := range spans {
		if s.Service == "countersign" && (s.TraceID == write || s.Name == "countersign.quote") {
			named[s.Name] = s
		}
	}
	var tree []string
	for _, s := range spans {
		tree = append(tree, fmt.Sprintf("%s %s trace=%s span=%s parent=%s kind=%d links=%v", s.Service, s.Name, s.TraceID, s.SpanID, s.Parent, s.Kind, s.Links))
	}
	t.Logf("the collector got:\n%s", strings.Join(tree, "\n"))
	for _, name := range []string{"countersign.quote", "countersign.propose", "countersign.send", "countersign.verify"} {
		if _, ok := named[name]; !ok {
			t.Fatalf("no %s span", name)
		}
	}

	quote := named["countersign.quote"]
	if _, _, ok := tracingtest.Served(spans, quote, "demoshop", "GET /orders/{id}"); !ok {
		t.Errorf("the dry run: no shop server span GET /orders/{id} under a client span of the quote %s", quote.SpanID)
	}
	if p := named["countersign.propose"]; len(p.Links) != 1 || p.Links[0] != quote.SpanID {
		t.Errorf("the proposal links %v, want the quote %s", p.Links, quote.SpanID)
	}
	send := named["countersign.send"]
	if _, work, ok := tracingtest.Served(spans, send, "demoshop", "POST /refunds"); !ok {
		t.Errorf("the send: no shop server span POST /refunds under a client span of the send %s", send.SpanID)
	} else if got := strings.Join(work, ", "); got != "demoshop.transaction, demoshop.transaction > demoshop.ledger" {
		t.Errorf("beneath the shop's POST /refunds: %s, want its transaction with the ledger write inside", got)
	}
	verify := named["countersign.verify"]
	if _, _, ok := tracingtest.Served(spans, verify, "demoshop", "GET /refunds"); !ok {
		t.Errorf("the read-back: no shop server span GET /refunds under a client span of the verify %s", verify.SpanID)
	}
	for _, s := range spans {
		if s.Service == "demoshop" && s.Kind == tracingtest.KindServer && s.Parent == "" {
			t.Errorf("the shop served %s outside any console trace", s.Name)
		}
	}
}
