package kit_test

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/web/kit"
)

// TestTelemetry: the Prometheus handler counts requests by route pattern,
// reports the dispatch figures, and asks for the bearer token when one is
// configured.
func TestTelemetry(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	tel := kit.NewTelemetry(b.Store)
	console := b.ServeAnother(t, webtest.WithTelemetry(tel))
	for range 2 {
		res, err := http.Get(console.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	scrape := httptest.NewServer(tel.PrometheusHandler("s3cret"))
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

// TestTelemetryMethodLabelIsBounded sends requests with hundreds of
// invented methods: they share one "other" label, so the series stay few.
func TestTelemetryMethodLabelIsBounded(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	tel := kit.NewTelemetry(b.Store)
	console := b.ServeAnother(t, webtest.WithTelemetry(tel))
	const methods = 300
	for i := range methods {
		method := "M" + strconv.FormatUint(rand.Uint64(), 36) + strconv.Itoa(i)
		for _, path := range []string{"/healthz", "/no-such-page"} {
			req, _ := http.NewRequest(method, console.URL+path, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
	}
	scrape := httptest.NewServer(tel.PrometheusHandler(""))
	t.Cleanup(scrape.Close)
	res, err := http.Get(scrape.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var series []string
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "countersign_http_requests_total{") {
			series = append(series, strings.TrimSpace(line))
		}
	}
	if len(series) == 0 || len(series) > 4 {
		t.Fatalf("%d request series after %d invented methods, want a handful:\n%s", len(series), methods, strings.Join(series, "\n"))
	}
	for _, s := range series {
		if !strings.Contains(s, `method="other"`) {
			t.Errorf("series %s: want the method label other", s)
		}
	}
}
