package journeys_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// TestBrowserCustomerPasskeysPageIsForPeople: Jordan, signed in, adds a
// passkey after a decision, follows "Your passkeys for Harbour & Pine"
// from the request page, and removes it after the confirmation page, all
// by keyboard-reachable controls. axe-core finds nothing serious on the
// list at desktop and phone width, on the confirmation, or on the list
// saying it was removed.
func TestBrowserCustomerPasskeysPageIsForPeople(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	console := passkeyConsole(t, b)
	first, _ := b.PendingRefund(t)
	ctx := browsertest.New(t, 120*time.Second)
	virtualAuthenticator(t, ctx)
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			at, _ := chromedp.Run(ctx, chromedp.Location())
			text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
			t.Fatalf("%s: %v (at %s, saying %q)", what, err, at, text)
		}
	}
	step("sign in", chromedp.Navigate(console+"/sign-in"), browserSignIn(b.CustomerAccount(t, webtest.Jordan)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)))
	step("decline and add a passkey", chromedp.Navigate(console+"/requests/"+first.ID),
		chromedp.Click(chromedp.CSS(`[data-testid="decline"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="add-passkey"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="add-passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey-added"]`)))
	step("open the list", chromedp.Click(chromedp.CSS(`[data-testid="passkeys-link"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey-row"]`)))
	for _, w := range []struct {
		name     string
		viewport chromedp.Action[chromedp.Void]
	}{{"desktop", chromedp.EmulateViewport(1280, 900)}, {"phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)}} {
		if err := chromedp.Do(ctx, w.viewport); err != nil {
			t.Fatal(err)
		}
		browsertest.CheckAccessibility(t, ctx, "the passkeys at "+w.name+" width")
	}
	// Keyboard: the row's Remove is in the tab order, named with the
	// passkey's name for a screen reader.
	name, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const e = document.querySelector('[data-testid="passkey-remove"]');
		return e && e.tabIndex >= 0 && e.offsetParent !== null ? e.textContent.replace(/\s+/g, ' ').trim() : '';
	})()`))
	if !strings.HasPrefix(name, "Remove the passkey ") || len(name) == len("Remove the passkey ") {
		t.Errorf("the Remove control reads %q", name)
	}
	step("ask to remove", chromedp.Click(chromedp.CSS(`[data-testid="passkey-remove"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey-remove-submit"]`)))
	browsertest.CheckAccessibility(t, ctx, "the removal's confirmation")
	step("remove", chromedp.Click(chromedp.CSS(`[data-testid="passkey-remove-submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey-removed"]`)))
	browsertest.CheckAccessibility(t, ctx, "the list after the removal")
	if keys, _ := b.Store.CustomerPasskeysOf(t.Context(), "shop", webtest.Jordan); len(keys) != 0 {
		t.Fatalf("%d passkeys left after the removal", len(keys))
	}
}
