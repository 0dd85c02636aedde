package journeys_test

import (
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
)

// TestBrowserSlackPage: an agent's Slack page, where a link code is
// entered, passes axe-core, and a wrong code is said at its field.
func TestBrowserSlackPage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithSlack())
	ctx := browsertest.New(t, 90*time.Second)
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/account/slack"),
		browserSignIn(b.Users[accounts.Agent]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="slack-link-form"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.CheckAccessibility(t, ctx, "slack page")
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#code`), "WRON-GGGG"),
		chromedp.Submit(chromedp.CSS(`[data-testid="slack-link-form"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#code[aria-invalid="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#code-error`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.CheckAccessibility(t, ctx, "slack page with a wrong code")
}
