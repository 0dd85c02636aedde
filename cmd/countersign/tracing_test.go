package main

import (
	"testing"

	"countersign/internal/slowtest"
	"countersign/internal/tracing/tracingtest"
)

// TestMakeRunTracesBothSides runs the demo console as make run does, with
// OTEL_EXPORTER_OTLP_ENDPOINT naming a collector: the demo's own
// proposals, dry-run against the bundled shop as the console seeds them,
// reach the collector from both services — the console's quote span, its
// client span beneath, and the demo shop's server span continuing that in
// the same trace — by the time the console has stopped; and no call the
// shop served came without the console's trace context.
func TestMakeRunTracesBothSides(t *testing.T) {
	slowtest.Skip(t, "builds the console and starts it with its embedded PostgreSQL and demo shop")
	t.Parallel()
	collector := tracingtest.Start(t)
	c := startConsole(t, consoleBinary(t), consoleDataDir(t), "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL, "OTEL_SERVICE_NAME=")
	c.stop(t)

	spans := collector.Spans()
	routes := map[string]bool{}
	for _, s := range spans {
		if s.Service == "demoshop" && s.Kind == tracingtest.KindServer {
			routes[s.Name] = true
			if s.Parent == "" {
				t.Errorf("the shop served %s to a request that carried no trace context", s.Name)
			}
		}
	}
	quotes, served := 0, 0
	for _, q := range spans {
		if q.Service != "countersign" || q.Name != "countersign.quote" {
			continue
		}
		quotes++
		for route := range routes {
			if _, _, ok := tracingtest.Served(spans, q, "demoshop", route); ok {
				served++
				break
			}
		}
	}
	if quotes == 0 || served != quotes {
		t.Errorf("%d of the demo's %d dry runs show the shop's server span under the console's request (%d spans, shop routes %v)",
			served, quotes, len(spans), routes)
	}
}
