package journeys_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/web/browsertest"
)

// TestBrowserHandoffTakeThenResolve drives the hand-offs in headless
// Chromium as an agent would, desktop and phone: the list says its target
// and puts the one over it first, naming the customer; Take (by keyboard)
// lands on the conversation's own page, with the customer and the draft;
// a note and Resolve end it, and the page says by whom. Each page passes
// axe, has no sideways scroll on a phone, and is saved as a screenshot.
func TestBrowserHandoffTakeThenResolve(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	now := b.Clock.Now()
	id := webtest.InsertHandoff(t, b, f.Task.ConversationID, f.Task.ID, "transactional_high", fmt.Sprintf(
		`{"summary":"Wants $8.00 back: the bulb arrived broken. Photo sent.","facts":{"order":%q,"item":"Bulb"},
		  "would_propose":{"action":"issue_refund","args":{"order_id":%q,"amount_cents":800,"reason_code":"damaged"}}}`, f.Order.ID, f.Order.ID),
		now.Add(-40*time.Minute))
	webtest.InsertHandoff(t, b, "conv-question", "", "informational", `{"summary":"Asks whether the lamp ships abroad."}`, now.Add(-3*time.Minute))
	webtest.InsertHandoff(t, b, "conv-quiet", "", "ambiguous", `{}`, now.Add(-20*time.Minute))

	ctx := browsertest.New(t, 240*time.Second)
	axe := func(page string) { t.Helper(); browsertest.CheckAccessibility(t, ctx, page) }
	shot := func(name string) { t.Helper(); browsertest.Screenshot(t, ctx, name) }
	phone := func(page, wait, name string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Reload(),
			chromedp.WaitVisible(chromedp.CSS(wait))); err != nil {
			t.Fatal(err)
		}
		if evalAs[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth`) {
			t.Errorf("%s on a 390 px phone scrolls sideways", page)
		}
		axe(page + " on a phone")
		shot(name)
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(wait))); err != nil {
			t.Fatal(err)
		}
	}

	err := chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/handoffs"),
		browserSignIn(b.Users[accounts.Agent]),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="handoff-target"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if first := evalAs[string](t, ctx, `document.querySelector('article[data-testid^="handoff-"]').getAttribute('data-testid')`); first != fmt.Sprint("handoff-", id) {
		t.Errorf("the first card is %s, want the one longest over the target", first)
	}
	if got := evalAs[string](t, ctx, `document.querySelector('article[data-testid^="handoff-"] [data-testid="handoff-customer"]').textContent`); !strings.Contains(got, f.Customer.Email) {
		t.Errorf("the first card names %q, want the customer", got)
	}
	axe("hand-offs")
	shot("handoffs-list-desktop.png")
	phone("hand-offs", `[data-testid="handoff-target"]`, "handoffs-list-phone.png")

	// Keyboard: the first card's Take button, Enter.
	err = chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(fmt.Sprintf(`[data-testid="handoff-%d"] [data-testid="take"]`, id))),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="handoff-state"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	location, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.HasSuffix(location, fmt.Sprint("/handoffs/", id)) {
		t.Errorf("after Take the browser is at %q, want the hand-off's page", location)
	}
	for sel, want := range map[string]string{`[data-testid="handoff-state"]`: "Taken by you", `[data-testid="customer-ref"]`: f.Customer.Email,
		`[data-testid="handoff-draft"]`: "$8.00"} {
		if got := evalAs[string](t, ctx, `document.querySelector('`+sel+`').textContent`); !strings.Contains(got, want) {
			t.Errorf("%s says %q, want %q", sel, strings.Join(strings.Fields(got), " "), want)
		}
	}
	axe("hand-off page")
	shot("handoff-page-desktop.png")
	phone("hand-off page", `[data-testid="handoff-state"]`, "handoff-page-phone.png")

	err = chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(`#resolve-note`)),
		chromedp.SendKeys(chromedp.CSS(`#resolve-note`), "Refunded $8.00 for the broken bulb by phone."),
		chromedp.Click(chromedp.CSS(`[data-testid="resolve"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="handoff-note"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := evalAs[string](t, ctx, `document.querySelector('[data-testid="handoff-state"]').textContent`); !strings.Contains(got, "Resolved by "+b.Users[accounts.Agent].Name) {
		t.Errorf("after Resolve the page says %q", strings.Join(strings.Fields(got), " "))
	}
	axe("resolved hand-off")
	shot("handoff-resolved-desktop.png")
}
