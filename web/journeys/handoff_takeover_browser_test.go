package journeys_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
)

// TestBrowserHandoffTakeOverLeadsWithTheProblem: a manager opens a
// conversation an agent holds, sends Take over with a blank reason and
// lands on the page again with the error summary focused and the field
// marked, desktop and phone; with a reason the page says who took it from
// whom. Each page passes axe and is saved as a screenshot.
func TestBrowserHandoffTakeOverLeadsWithTheProblem(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	id := webtest.InsertHandoff(t, b, f.Task.ConversationID, f.Task.ID, "transactional_high",
		`{"summary":"Wants $8.00 back: the bulb arrived broken."}`, b.Clock.Now().Add(-30*time.Minute))
	holder := b.Client(t)
	holder.MustSignIn(b.Users[accounts.Agent])
	holder.Post(webtest.HandoffPath(id, "take"), url.Values{"_csrf": {holder.CSRF("/handoffs")}})

	ctx := browsertest.New(t, 180*time.Second)
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(b.Server.URL+webtest.HandoffPath(id, "")),
		browserSignIn(b.Users[accounts.Manager]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="take-over-form"]`)),
		chromedp.SendKeys(chromedp.CSS(`#take-over-reason`), "   "),
		chromedp.Click(chromedp.CSS(`[data-testid="take-over"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="error-summary"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := evalAs[string](t, ctx, `document.activeElement.id`); got != "error-summary" {
		t.Errorf("after a refused take-over the focus is on #%s, want the error summary", got)
	}
	if got := evalAs[string](t, ctx, `document.querySelector('#take-over-reason').getAttribute('aria-invalid')`); got != "true" {
		t.Errorf("the reason is not marked invalid: %q", got)
	}
	browsertest.CheckAccessibility(t, ctx, "refused take-over")
	browsertest.Screenshot(t, ctx, "handoff-takeover-refused-desktop.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2))); err != nil {
		t.Fatal(err)
	}
	if evalAs[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth`) {
		t.Errorf("the refused take-over on a 390 px phone scrolls sideways")
	}
	browsertest.CheckAccessibility(t, ctx, "refused take-over on a phone")
	browsertest.Screenshot(t, ctx, "handoff-takeover-refused-phone.png")

	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.SetValue(chromedp.CSS(`#take-over-reason`), "Sam is off today; the customer is waiting."),
		chromedp.Click(chromedp.CSS(`[data-testid="take-over"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="taken-over"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s took it over from %s", b.Users[accounts.Manager].Name, b.Users[accounts.Agent].Name)
	if got := evalAs[string](t, ctx, `document.querySelector('[data-testid="taken-over"]').textContent`); !strings.Contains(got, want) {
		t.Errorf("after the take-over the page says %q, want %q", got, want)
	}
	browsertest.CheckAccessibility(t, ctx, "taken over")
	browsertest.Screenshot(t, ctx, "handoff-taken-over-desktop.png")
}
