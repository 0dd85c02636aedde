package tracing_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"countersign/internal/tracing"
)

// TestFromEnvExportsOTLPJSON: with OTEL_EXPORTER_OTLP_ENDPOINT set, a
// write's stages reach the collector at /v1/traces as OTLP JSON, with the
// headers of OTEL_EXPORTER_OTLP_HEADERS, the service name, hex ids, and the
// reconcile span a child of the proposal's.
func TestFromEnvExportsOTLPJSON(t *testing.T) {
	got := make(chan map[string]any, 4)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer t0ken" ||
			json.Unmarshal(body, &req) != nil {
			t.Errorf("collector got %s %s (%s, auth %q): %.200s", r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), body)
		}
		got <- req
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL+"/")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer t0ken")
	t.Setenv("OTEL_SERVICE_NAME", "countersign-test")
	endpoint, shutdown := tracing.FromEnv()
	defer tracing.Install(nil)
	if endpoint != collector.URL+"/v1/traces" {
		t.Fatalf("endpoint %q", endpoint)
	}
	ctx := context.Background()
	tracing.Proposed(ctx, "inv_1", "tsk_1", time.Now(), "state", "awaiting_approval")
	_, span := tracing.Stage(ctx, "reconcile", "inv_1", "tsk_1")
	span.End()
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	req := <-got
	rs := req["resourceSpans"].([]any)[0].(map[string]any)
	if attr := rs["resource"].(map[string]any)["attributes"].([]any)[0].(map[string]any); attr["key"] != "service.name" ||
		attr["value"].(map[string]any)["stringValue"] != "countersign-test" {
		t.Errorf("resource %v", rs["resource"])
	}
	spans := map[string]map[string]any{}
	for _, s := range rs["scopeSpans"].([]any)[0].(map[string]any)["spans"].([]any) {
		s := s.(map[string]any)
		spans[s["name"].(string)] = s
	}
	root := tracing.WriteTrace("inv_1")
	p, r := spans["countersign.propose"], spans["countersign.reconcile"]
	if p == nil || r == nil {
		t.Fatalf("spans %v", spans)
	}
	if p["traceId"] != root.TraceID().String() || p["spanId"] != root.SpanID().String() || p["parentSpanId"] != nil {
		t.Errorf("proposal %v, want the root %s/%s", p, root.TraceID(), root.SpanID())
	}
	if r["traceId"] != root.TraceID().String() || r["parentSpanId"] != root.SpanID().String() {
		t.Errorf("reconcile %v, want a child of %s", r, root.SpanID())
	}
	if _, ok := r["startTimeUnixNano"].(string); !ok {
		t.Errorf("times are not strings of nanoseconds: %v", r)
	}
}

// TestNothingIsTracedUntilInstalled: without a provider a stage's context
// carries no span, so no traceparent leaves.
func TestNothingIsTracedUntilInstalled(t *testing.T) {
	ctx, span := tracing.Stage(context.Background(), "send", "inv_1", "tsk_1")
	defer span.End()
	if span.SpanContext().IsValid() || span.IsRecording() {
		t.Errorf("a span without a provider: %v", span.SpanContext())
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://shop.test/", nil)
	var sent http.Header
	rt := tracing.Transport(roundTrip(func(r *http.Request) (*http.Response, error) {
		sent = r.Header
		return &http.Response{StatusCode: 204, Body: http.NoBody}, nil
	}))
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if v := sent.Get("traceparent"); v != "" {
		t.Errorf("traceparent %q sent without tracing", v)
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
