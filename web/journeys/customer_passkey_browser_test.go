package journeys_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// TestBrowserCustomerPasskeyConfirmsTheNextRequest: Jordan signs in to
// their account and declines a request; the page after the decision
// offers "Use a passkey next time", which adds one through Chromium's
// virtual authenticator. Signed out, Jordan opens the next request's link
// and confirms it with the passkey alone; the assertion the page handed
// the control plane verifies offline against the quote shown. axe-core
// finds nothing serious on the offer, its result and the link page's
// passkey buttons.
func TestBrowserCustomerPasskeyConfirmsTheNextRequest(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	console := passkeyConsole(t, b)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.Control.RunDispatcher(runCtx, 50*time.Millisecond)
	first, _ := b.PendingRefund(t)
	ctx := browsertest.New(t, 120*time.Second)
	auth := virtualAuthenticator(t, ctx)

	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			// Where the browser stands and what the page says, a passkey's
			// refusal included.
			at, _ := chromedp.Run(ctx, chromedp.Location())
			text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
			t.Fatalf("%s: %v (at %s, saying %q)", what, err, at, text)
		}
	}
	step("sign in", chromedp.Navigate(console+"/sign-in"), browserSignIn(b.CustomerAccount(t, webtest.Jordan)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-heading"]`)))
	step("decline with the account", chromedp.Navigate(console+"/requests/"+first.ID),
		chromedp.Click(chromedp.CSS(`[data-testid="decline"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="add-passkey"]`)))
	browsertest.CheckAccessibility(t, ctx, "the passkey offer after a decision")
	step("add a passkey", chromedp.Click(chromedp.CSS(`[data-testid="add-passkey"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey-added"]`)))
	browsertest.CheckAccessibility(t, ctx, "the passkey added")
	if creds := credentialsOf(t, ctx, auth); len(creds) != 1 || creds[0].RpID != "localhost" {
		t.Fatalf("the authenticator holds %+v, want one credential for localhost", creds)
	}

	next, link := b.PendingRefund(t)
	step("the next request's link, signed out", chromedp.Click(chromedp.CSS(`[data-testid="sign-out"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="sign-in-form"]`)),
		chromedp.Navigate(console+link),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="passkey-confirm"]`)))
	browsertest.CheckAccessibility(t, ctx, "the link page with the passkey's decisions")
	// The request's own page, proven: it links the customer's list.
	step("confirm with the passkey", chromedp.Click(chromedp.CSS(`[data-testid="passkey-confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="my-requests-link"]`)))
	at, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.HasSuffix(at, "/requests/"+next.ID) {
		t.Errorf("after the passkey's confirmation the browser is at %s", at)
	}
	if got := b.Invocation(t, next.ID).State; got == controlplane.AwaitingConfirmation {
		t.Fatalf("the request is still %s", got)
	}
	kept := b.Consent(t, next.ID)
	if kept.Passkey == nil || kept.Proof != "passkey" || kept.Decision != consent.Confirm {
		t.Fatalf("the decision was recorded as %+v, want a passkey's confirmation", kept.Evidence)
	}
	if err := kept.Verify(next.ID, kept.Quote); err != nil {
		t.Fatalf("the stored assertion does not verify against the quote shown: %v", err)
	}
	if kept.Passkey.Origin != console {
		t.Errorf("the assertion was made at %s, want %s", kept.Passkey.Origin, console)
	}
}
