package httpadapter_test

import (
	"context"
	"maps"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"countersign/internal/gqlshop"
	"countersign/internal/tracing"
)

// traced installs a provider keeping the console's spans for the test
// (not parallel: the provider is the process's).
func traced(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tracing.Install(tracing.NewProvider(exp, true))
	t.Cleanup(func() { tracing.Install(nil) })
	return exp
}

// children are the spans of exp directly under parent, by name.
func children(exp *tracetest.InMemoryExporter, parent trace.Span) map[string]sdktrace.ReadOnlySpan {
	out := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range exp.GetSpans().Snapshots() {
		if s.Parent().SpanID() == parent.SpanContext().SpanID() {
			out[s.Name()] = s
		}
	}
	return out
}

// TestATokenRequestIsASpanOfItsOwn: the OAuth token a dry run needs first
// is fetched in a client span "oauth2.token" under the stage, beside the
// client span of the call it was fetched for.
func TestATokenRequestIsASpanOfItsOwn(t *testing.T) {
	exp := traced(t)
	a, _, _, _, err := oauthPayments(t, clientCredentials,
		map[string]string{"PAYMENTS_CLIENT_ID": "countersign", "PAYMENTS_CLIENT_SECRET": "cs-0123456789"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stage := tracing.Stage(context.Background(), "quote", "inv_1", "tsk_1")
	_, err = a.DryRun(ctx, ada, "refund_charge", raw(t, map[string]any{"charge_id": "ch_1", "amount_cents": 100, "reason": "requested_by_customer"}))
	stage.End()
	if err != nil {
		t.Fatal(err)
	}
	got := children(exp, stage)
	if tok, call := got["oauth2.token"], got["HTTP GET"]; tok == nil || call == nil ||
		tok.SpanKind() != trace.SpanKindClient || call.SpanKind() != trace.SpanKindClient {
		t.Errorf("under the quote: %v, want the token request and the call, each a client span", slices.Sorted(maps.Keys(got)))
	}
}

// TestAGraphQLCallShowsTheSystemsSide: a GraphQL system served as a
// traced service answers a dry run's query in a server span "graphql
// query" that continues the console's client span, in the write's trace.
func TestAGraphQLCallShowsTheSystemsSide(t *testing.T) {
	exp := traced(t)
	systemSpans := tracetest.NewInMemoryExporter()
	shop := gqlshop.New("gql-token", clock)
	srv := httptest.NewServer(tracing.Handler(tracing.NewProvider(systemSpans, true), shop))
	t.Cleanup(srv.Close)
	file, err := os.ReadFile(gqlFile)
	if err != nil {
		t.Fatal(err)
	}
	a := loadGQL(t, gqlFile, file, srv, nil)
	ctx, stage := tracing.Stage(context.Background(), "quote", "inv_1", "tsk_1")
	_, err = a.DryRun(ctx, ada, "refund_order", raw(t, map[string]any{"order_id": "ord_3", "amount_cents": 100, "reason": "damaged"}))
	stage.End()
	if err != nil {
		t.Fatal(err)
	}
	if children(exp, stage)["HTTP POST"] == nil {
		t.Fatalf("no client span under the quote: %v", slices.Sorted(maps.Keys(children(exp, stage))))
	}
	var names []string
	for _, s := range systemSpans.GetSpans().Snapshots() {
		names = append(names, s.Name())
		if s.Name() == "graphql query" && s.SpanKind() == trace.SpanKindServer && s.SpanContext().TraceID() == tracing.WriteTrace("inv_1").TraceID() {
			var parent sdktrace.ReadOnlySpan
			for _, c := range exp.GetSpans().Snapshots() {
				if c.SpanContext().SpanID() == s.Parent().SpanID() {
					parent = c
				}
			}
			if parent == nil || parent.SpanKind() != trace.SpanKindClient || parent.Parent().SpanID() != stage.SpanContext().SpanID() {
				t.Errorf("the system's query span is under %v, want a client span of the quote", s.Parent())
			}
			return
		}
	}
	t.Errorf("the system's spans %v: no graphql query in the write's trace", names)
}
