package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// FromEnv installs a provider exporting over OTLP/HTTP with JSON bodies
// when the standard variables name an endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// (the whole URL), else OTEL_EXPORTER_OTLP_ENDPOINT (a base, /v1/traces
// appended); OTEL_EXPORTER_OTLP_HEADERS adds headers (k=v,k2=v2) and
// OTEL_SERVICE_NAME names the service (countersign). Without an endpoint
// it installs nothing. The returned function flushes and stops it.
func FromEnv() (endpoint string, shutdown func(context.Context) error) {
	tp, endpoint := ServiceFromEnv(ServiceName("countersign"))
	if tp == nil {
		return "", func(context.Context) error { return nil }
	}
	Install(tp)
	return endpoint, tp.Shutdown
}

// ServiceName is OTEL_SERVICE_NAME, or def when it is not set.
func ServiceName(def string) string {
	if name := os.Getenv("OTEL_SERVICE_NAME"); name != "" {
		return name
	}
	return def
}

// ServiceFromEnv is a provider exporting as FromEnv's does, to the same
// endpoint, the spans of another service by its own name: the demo shop
// that runs inside the console's process. It installs nothing (the
// service passes it to Handler) and is nil without an endpoint; Shutdown
// flushes it.
func ServiceFromEnv(service string) (tp *sdktrace.TracerProvider, endpoint string) {
	endpoint = os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		if base := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); base != "" {
			endpoint = strings.TrimRight(base, "/") + "/v1/traces"
		}
	}
	if endpoint == "" {
		return nil, ""
	}
	exp := &OTLPExporter{URL: endpoint, Service: service, Header: http.Header{}, Client: &http.Client{Timeout: 10 * time.Second}}
	for kv := range strings.SplitSeq(os.Getenv("OTEL_EXPORTER_OTLP_HEADERS"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			exp.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return NewProvider(exp, false), endpoint
}

// OTLPExporter sends spans to an OTLP/HTTP collector as JSON
// (ExportTraceServiceRequest in the protocol's JSON mapping), which every
// OpenTelemetry Collector and most back ends take on /v1/traces.
type OTLPExporter struct {
	URL     string
	Service string
	Header  http.Header
	Client  *http.Client
}

// ExportSpans posts one request with every span; a collector's refusal
// (not 2xx) is an error, and the SDK drops the batch.
func (e *OTLPExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := json.Marshal(otlpRequest(e.Service, spans))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range e.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := e.Client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("otlp: the collector answered %d", res.StatusCode)
	}
	return nil
}

// Shutdown stops nothing: each export is a request of its own.
func (e *OTLPExporter) Shutdown(context.Context) error { return nil }

type otlpKV struct {
	Key   string         `json:"key"`
	Value map[string]any `json:"value"`
}

func otlpAttrs(kvs []attribute.KeyValue) []otlpKV {
	out := make([]otlpKV, 0, len(kvs))
	for _, kv := range kvs {
		var v map[string]any
		switch kv.Value.Type() {
		case attribute.BOOL:
			v = map[string]any{"boolValue": kv.Value.AsBool()}
		case attribute.INT64:
			v = map[string]any{"intValue": strconv.FormatInt(kv.Value.AsInt64(), 10)}
		case attribute.FLOAT64:
			v = map[string]any{"doubleValue": kv.Value.AsFloat64()}
		default:
			v = map[string]any{"stringValue": kv.Value.String()}
		}
		out = append(out, otlpKV{Key: string(kv.Key), Value: v})
	}
	return out
}

// otlpRequest is the JSON mapping of ExportTraceServiceRequest: ids in hex,
// times as strings of unix nanoseconds, enums as numbers.
func otlpRequest(service string, spans []sdktrace.ReadOnlySpan) map[string]any {
	var out []map[string]any
	for _, s := range spans {
		sp := map[string]any{"traceId": s.SpanContext().TraceID().String(), "spanId": s.SpanContext().SpanID().String(),
			"name": s.Name(), "kind": otlpKind(s.SpanKind()), "attributes": otlpAttrs(s.Attributes()),
			"startTimeUnixNano": strconv.FormatInt(s.StartTime().UnixNano(), 10), "endTimeUnixNano": strconv.FormatInt(s.EndTime().UnixNano(), 10)}
		if p := s.Parent(); p.IsValid() {
			sp["parentSpanId"] = p.SpanID().String()
		}
		var links []map[string]any
		for _, l := range s.Links() {
			links = append(links, map[string]any{"traceId": l.SpanContext.TraceID().String(), "spanId": l.SpanContext.SpanID().String()})
		}
		if links != nil {
			sp["links"] = links
		}
		switch s.Status().Code {
		case codes.Error:
			sp["status"] = map[string]any{"code": 2, "message": s.Status().Description}
		case codes.Ok:
			sp["status"] = map[string]any{"code": 1}
		}
		out = append(out, sp)
	}
	return map[string]any{"resourceSpans": []any{map[string]any{
		"resource":   map[string]any{"attributes": otlpAttrs([]attribute.KeyValue{attribute.String("service.name", service)})},
		"scopeSpans": []any{map[string]any{"scope": map[string]any{"name": "countersign"}, "spans": out}},
	}}}
}

func otlpKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	}
	return 1
}
