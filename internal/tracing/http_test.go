package tracing_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"countersign/internal/tracing"
)

// spansByName are the ended spans of exp by name.
func spansByName(t *testing.T, exp *tracetest.InMemoryExporter) map[string]sdktrace.ReadOnlySpan {
	t.Helper()
	out := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range exp.GetSpans().Snapshots() {
		out[s.Name()] = s
	}
	return out
}

// TestARequestIsAClientSpanTheServiceContinues: a request through
// Transport is a client span under the stage in its context, the traced
// service's server span (Handler) is that client span's child in the same
// trace, named after its route, and the service's own work (Within) is the
// server span's child.
func TestARequestIsAClientSpanTheServiceContinues(t *testing.T) {
	console := tracetest.NewInMemoryExporter()
	tracing.Install(tracing.NewProvider(console, true))
	t.Cleanup(func() { tracing.Install(nil) })
	shop := tracetest.NewInMemoryExporter()
	shopTP := tracing.NewProvider(shop, true)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		trace.SpanFromContext(r.Context()).SetName("GET /orders/{id}")
		_, span := tracing.Within(r.Context(), "demoshop.transaction")
		span.End()
		_, _ = io.WriteString(w, `{"id":"ord_1"}`)
	})
	srv := httptest.NewServer(tracing.Handler(shopTP, mux))
	defer srv.Close()
	client := &http.Client{Transport: tracing.Transport(nil)}

	ctx, stage := tracing.Stage(context.Background(), "send", "inv_1", "tsk_1")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/orders/ord_1?email=a@example.test", nil)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	stage.End()

	c := spansByName(t, console)
	s := spansByName(t, shop)
	send, call := c["countersign.send"], c["HTTP GET"]
	server, work := s["GET /orders/{id}"], s["demoshop.transaction"]
	if send == nil || call == nil || server == nil || work == nil {
		t.Fatalf("console spans %v, shop spans %v", slices.Sorted(maps.Keys(c)), slices.Sorted(maps.Keys(s)))
	}
	if call.SpanKind() != trace.SpanKindClient || call.Parent().SpanID() != send.SpanContext().SpanID() {
		t.Errorf("the request is a %v span under %s, want a client span under send %s", call.SpanKind(), call.Parent().SpanID(), send.SpanContext().SpanID())
	}
	if server.SpanKind() != trace.SpanKindServer || server.SpanContext().TraceID() != tracing.WriteTrace("inv_1").TraceID() ||
		server.Parent().SpanID() != call.SpanContext().SpanID() || !server.Parent().IsRemote() {
		t.Errorf("the shop's span is a %v span in %s under %v, want a server span of the write's trace under the client span %s",
			server.SpanKind(), server.SpanContext().TraceID(), server.Parent(), call.SpanContext().SpanID())
	}
	if work.Parent().SpanID() != server.SpanContext().SpanID() {
		t.Errorf("the shop's transaction is under %s, want its server span %s", work.Parent().SpanID(), server.SpanContext().SpanID())
	}
	for _, kv := range call.Attributes() {
		if kv.Key == "url.path" && kv.Value.AsString() != "/orders/ord_1" {
			t.Errorf("url.path %q", kv.Value.AsString())
		}
		if strings.Contains(kv.Value.String(), "example.test") {
			t.Errorf("the client span keeps the query: %s=%s", kv.Key, kv.Value.AsString())
		}
	}
}

// TestARequestWithoutAStageStartsATrace: a request made outside any span
// (a read, a quote) is still a client span, the root of a trace of its
// own, and carries its traceparent; Operation names it.
func TestARequestWithoutAStageStartsATrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tracing.Install(tracing.NewProvider(exp, true))
	t.Cleanup(func() { tracing.Install(nil) })
	var sent string
	rt := tracing.Transport(roundTrip(func(r *http.Request) (*http.Response, error) {
		sent = r.Header.Get("traceparent")
		return &http.Response{StatusCode: 200, Status: "200 OK", Body: http.NoBody}, nil
	}))
	req := httptest.NewRequestWithContext(tracing.Operation(context.Background(), "oauth2.token"), http.MethodPost, "http://auth.test/token", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	span := spansByName(t, exp)["oauth2.token"]
	if span == nil {
		t.Fatalf("spans %v", slices.Sorted(maps.Keys(spansByName(t, exp))))
	}
	if span.Parent().IsValid() || span.SpanKind() != trace.SpanKindClient {
		t.Errorf("the token request is a %v span under %v, want a client root", span.SpanKind(), span.Parent())
	}
	want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"
	if sent != want {
		t.Errorf("traceparent %q, want %q", sent, want)
	}
}
