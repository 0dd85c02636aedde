package browsertest_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/web/browsertest"
)

// TestAxeFindsViolations proves the accessibility check can fail: a page
// with an unlabelled input and an image without alt text has serious
// violations.
func TestAxeFindsViolations(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><html><head><title>bad</title></head><body><main><img src="x.png"><input type="text"></main></body></html>`))
	}))
	defer srv.Close()
	ctx := browsertest.New(t, 60*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	v := browsertest.Axe(t, ctx)
	ids := map[string]bool{}
	for _, x := range v {
		ids[x.ID] = true
	}
	if !ids["image-alt"] || !ids["label"] {
		t.Errorf("violations = %v, want image-alt and label", ids)
	}
}
