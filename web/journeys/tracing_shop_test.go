package journeys_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/tracing"
	"countersign/web/webtest"
)

// collected is one span as an OTLP/HTTP receiver got it.
type collected struct {
	Service, TraceID, SpanID, Parent, Name string
	Kind                                   int
	Links                                  []string
}

// otlpReceiver is an OTLP/HTTP collector on loopback keeping every span
// it is sent as JSON on /v1/traces, whichever service sent it.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []collected
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	if r.URL.Path != "/v1/traces" || json.Unmarshal(body, &req) != nil {
		http.Error(w, "not an export", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, a := range rs.Resource.Attributes {
			if a.Key == "service.name" {
				service = a.Value.StringValue
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c := collected{Service: service, TraceID: s.TraceID, SpanID: s.SpanID, Parent: s.ParentSpanID, Name: s.Name, Kind: s.Kind}
				for _, l := range s.Links {
					c.Links = append(c.Links, l.SpanID)
				}
				rc.spans = append(rc.spans, c)
			}
		}
	}
}

// OTLP span kinds.
const (
	kindServer = 2
	kindClient = 3
)

// under is the console's client span under parent whose request the
// shop served as route, and the shop's server span that continued it in
// parent's trace, with the shop's spans beneath that: the business
// system's side of one request.
func under(spans []collected, parent collected, route string) (server collected, work []string, ok bool) {
	for _, c := range spans {
		if c.Service != "countersign" || c.Kind != kindClient || c.Parent != parent.SpanID || c.TraceID != parent.TraceID {
			continue
		}
		for _, s := range spans {
			if s.Service == "demoshop" && s.Kind == kindServer && s.Parent == c.SpanID && s.TraceID == c.TraceID && s.Name == route {
				return s, below(spans, s), true
			}
		}
	}
	return collected{}, nil, false
}

// below names the spans under s, depth first ("demoshop.transaction >
// demoshop.ledger").
func below(spans []collected, s collected) []string {
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

// TestATraceShowsTheShopsSide: the console and the demo shop both export
// to one OTLP/HTTP collector (as they do inside make run, from the
// OTEL_EXPORTER_OTLP_* variables), and the collector holds, for a
// refund's dry run, its send and the send's read-back, the console's
// client span and, under it in the same trace, the shop's server span
// named after its route; the send's with the shop's transaction and
// ledger write beneath. The dry run, made before the write has an id, is
// a trace of its own that the write's proposal links.
func TestATraceShowsTheShopsSide(t *testing.T) {
	rc := &otlpReceiver{}
	collector := httptest.NewServer(rc)
	defer collector.Close()
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

	rc.mu.Lock()
	spans := rc.spans
	rc.mu.Unlock()
	write := tracing.WriteTrace(id).TraceID().String()
	named := map[string]collected{}
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
	if _, _, ok := under(spans, quote, "GET /orders/{id}"); !ok {
		t.Errorf("the dry run: no shop server span GET /orders/{id} under a client span of the quote %s", quote.SpanID)
	}
	if p := named["countersign.propose"]; len(p.Links) != 1 || p.Links[0] != quote.SpanID {
		t.Errorf("the proposal links %v, want the quote %s", p.Links, quote.SpanID)
	}
	send := named["countersign.send"]
	if _, work, ok := under(spans, send, "POST /refunds"); !ok {
		t.Errorf("the send: no shop server span POST /refunds under a client span of the send %s", send.SpanID)
	} else if got := strings.Join(work, ", "); got != "demoshop.transaction, demoshop.transaction > demoshop.ledger" {
		t.Errorf("beneath the shop's POST /refunds: %s, want its transaction with the ledger write inside", got)
	}
	verify := named["countersign.verify"]
	if _, _, ok := under(spans, verify, "GET /refunds"); !ok {
		t.Errorf("the read-back: no shop server span GET /refunds under a client span of the verify %s", verify.SpanID)
	}
	for _, s := range spans {
		if s.Service == "demoshop" && s.Kind == kindServer && s.Parent == "" {
			t.Errorf("the shop served %s outside any console trace", s.Name)
		}
	}
}
