package main

import (
	"strings"
	"testing"
	"time"
)

// TestTelemetryConfig: Prometheus telemetry is off by default, takes its
// address and token from the environment, and a bad address or a bad
// refresh of the manager's metrics is named.
func TestTelemetryConfig(t *testing.T) {
	c, err := parseConfig(nil, func(string) string { return "" })
	if err != nil || c.TelemetryAddr != "" || c.MetricsRefresh != 30*time.Second {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	env := map[string]string{"METRICS_ADDR": "127.0.0.1:9090", "METRICS_TOKEN": "tok"}
	c, err = parseConfig(nil, func(k string) string { return env[k] })
	if err != nil || c.TelemetryAddr != "127.0.0.1:9090" || c.TelemetryToken != "tok" {
		t.Fatalf("from env: %+v, %v", c, err)
	}
	env = map[string]string{"METRICS_ADDR": "everywhere", "METRICS_REFRESH": "often"}
	_, err = parseConfig(nil, func(k string) string { return env[k] })
	for _, want := range []string{"-metrics-addr", "-metrics-refresh"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
}
