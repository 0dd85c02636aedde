// Package tracingtest is an OpenTelemetry collector for tests: an
// OTLP/HTTP receiver on loopback that keeps every span it is sent as JSON
// on /v1/traces (what tracing.OTLPExporter sends, and what Jaeger and the
// OpenTelemetry Collector take), whichever service sent it, so a test can
// look at one trace across the console and the systems it calls.
package tracingtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// OTLP span kinds.
const (
	KindInternal = 1
	KindServer   = 2
	KindClient   = 3
)

// Span is one span as the collector got it: ids in hex, Parent empty for
// a root, Links the span ids it links.
type Span struct {
	Service, TraceID, SpanID, Parent, Name string
	Kind                                   int
	Links                                  []string
}

// Collector is a running receiver; its URL is the base for
// OTEL_EXPORTER_OTLP_ENDPOINT.
type Collector struct {
	URL   string
	mu    sync.Mutex
	spans []Span
}

// Start serves a collector until the test ends.
func Start(t testing.TB) *Collector {
	c := &Collector{}
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// Spans are the spans received so far, in the order they came.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []struct {
					Key   string
					Value struct{ StringValue string }
				}
			}
			ScopeSpans []struct {
				Spans []struct {
					TraceID, SpanID, ParentSpanID, Name string
					Kind                                int
					Links                               []struct{ SpanID string }
				}
			}
		}
	}
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || json.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP/HTTP JSON export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, a := range rs.Resource.Attributes {
			if a.Key == "service.name" {
				service = a.Value.StringValue
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				got := Span{Service: service, TraceID: s.TraceID, SpanID: s.SpanID, Parent: s.ParentSpanID, Name: s.Name, Kind: s.Kind}
				for _, l := range s.Links {
					got.Links = append(got.Links, l.SpanID)
				}
				c.spans = append(c.spans, got)
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, "{}")
}

// Served finds, among spans, a client span of the caller under parent
// (in parent's trace) and the server span of service named route that
// continued it: one request as both sides recorded it. It returns the
// server span and the names of the spans beneath it, depth first
// ("demoshop.transaction", "demoshop.transaction > demoshop.ledger").
func Served(spans []Span, parent Span, service, route string) (server Span, beneath []string, ok bool) {
	for _, c := range spans {
		if c.Kind != KindClient || c.Service != parent.Service || c.Parent != parent.SpanID || c.TraceID != parent.TraceID {
			continue
		}
		for _, s := range spans {
			if s.Service == service && s.Kind == KindServer && s.Name == route && s.Parent == c.SpanID && s.TraceID == c.TraceID {
				return s, below(spans, s), true
			}
		}
	}
	return Span{}, nil, false
}

func below(spans []Span, s Span) []string {
	var out []string
	for _, c := range spans {
		if c.Parent == s.SpanID && c.TraceID == s.TraceID {
			out = append(out, c.Name)
			for _, d := range below(spans, c) {
				out = append(out, c.Name+" > "+d)
			}
		}
	}
	return out
}
