package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"countersign/web"
)

// TestTelemetry: the Prometheus handler counts requests by route pattern,
// reports the dispatch figures, and asks for the bearer token when one is
// configured.
func TestTelemetry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tel := web.NewTelemetry(b.store)
	sessions := web.NewSessionStore(b.store, web.SessionConfig{KeyPairs: testKey, Idle: 30 * time.Minute, Absolute: 12 * time.Hour, Now: b.clock.Now})
	console := httptest.NewServer(web.New(web.Config{Store: b.store, Accounts: b.accounts, Sessions: sessions, Now: b.clock.Now,
		Registry: b.web.Registry(), Control: b.web.Control(), Telemetry: tel}).Handler())
	t.Cleanup(console.Close)
	for range 2 {
		res, err := http.Get(console.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	scrape := httptest.NewServer(tel.MetricsHandler("s3cret"))
	t.Cleanup(scrape.Close)
	res, err := http.Get(scrape.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("scrape without the token: %d, want 401", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, scrape.URL, nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`countersign_http_requests_total{method="GET",route="/healthz",status="200"} 2`,
		`countersign_http_request_duration_seconds_count{method="GET",route="/healthz"} 2`,
		"countersign_dispatch_queue_depth 0",
		"countersign_unverified_invocations 0",
		`countersign_invocations{state="completed"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}
