package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
)

// TestBrowserManagerPages signs a manager in through the form in headless
// Chromium, reads the metrics page over generated history, runs axe-core on
// it, the policies list and a policy form (no serious or critical
// violations), previews a policy change, and saves a screenshot of the
// metrics page under the temp dir.
func TestBrowserManagerPages(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOpts{shop: true})
	loadHistory(t, b, 2000, 500)
	ctx := browsertest.New(t, 120*time.Second)
	u := b.users[accounts.Manager]
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.srv.URL+"/sign-in"),
		browserSignIn(u),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)),
		chromedp.Navigate(b.srv.URL+"/metrics"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="metric-action_success"] svg.chart`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	value, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="metric-action_success"] [data-testid="metric-value"]`)))
	if err != nil || !strings.HasSuffix(value, "%") {
		t.Errorf("success rate reads %q (%v)", value, err)
	}
	browsertest.CheckAccessibility(t, ctx, "metrics")
	browsertest.Screenshot(t, ctx, "countersign-metrics.png")

	// Filtering by the keyboard-free path: the form's GET keeps the choice.
	err = chromedp.Do(ctx,
		chromedp.Navigate(b.srv.URL+"/metrics?action=issue_refund"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="readiness-shop-issue_refund"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	selected, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`#action`)))
	if err != nil || selected != "issue_refund" {
		t.Errorf("action filter shows %q (%v)", selected, err)
	}

	err = chromedp.Do(ctx,
		chromedp.Navigate(b.srv.URL+"/policies"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="policies-table"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if v := browsertest.Axe(t, ctx); len(v) > 0 {
		t.Errorf("policies: %d serious accessibility violations: %+v", len(v), v)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="policy-shop-issue_refund"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="policy-form"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="policy-preview"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="what-if-table"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if v := browsertest.Axe(t, ctx); len(v) > 0 {
		t.Errorf("policy form: %d serious accessibility violations: %+v", len(v), v)
	}
}
