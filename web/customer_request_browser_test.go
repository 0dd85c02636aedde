package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/web/browsertest"
)

// TestBrowserCustomerConfirms opens a confirmation link in headless
// Chromium, reads the consequences, confirms, and sees the reference
// without reloading; axe-core finds no serious or critical violation on
// the page before and after. The screenshot is kept under the temp dir.
func TestBrowserCustomerConfirms(t *testing.T) {
	t.Parallel()
	b := setupCustomer(t)
	inv, link := b.pendingRefund(t)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.cp.RunDispatcher(runCtx, 50*time.Millisecond)

	ctx := browsertest.New(t, 90*time.Second)
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.srv.URL+link),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="consequence"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="send-code"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The link shows the request; it offers no way to decide before the
	// customer proves who they are.
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="confirm"]').length`)); n != 0 {
		t.Errorf("the link page offers %d confirm buttons before any proof", n)
	}
	if v := browsertest.Axe(t, ctx); len(v) > 0 {
		t.Errorf("link page: %d serious accessibility violations: %+v", len(v), v)
	}
	sent := len(b.mail.Sent())
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="send-code"]`)), chromedp.WaitVisible(chromedp.CSS(`#code`))); err != nil {
		t.Fatalf("send a code: %v", err)
	}
	mails := b.mail.Sent()
	if len(mails) != sent+1 {
		t.Fatalf("%d mails sent, want 1", len(mails)-sent)
	}
	code := codeIn.FindString(mails[len(mails)-1].Body)
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#code`), code),
		chromedp.Click(chromedp.CSS(`[data-testid="verify"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
	)
	if err != nil {
		t.Fatalf("enter the code: %v", err)
	}
	location, _ := chromedp.Run(ctx, chromedp.Location())
	if strings.Contains(location, "/c/") || !strings.HasSuffix(location, "/requests/"+inv.ID) {
		t.Errorf("the address bar shows %q, want the token-free request URL", location)
	}
	consequences, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="consequences"]`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range inv.Quote.Consequences {
		if !strings.Contains(consequences, c) {
			t.Errorf("consequence %q not shown; the list reads %q", c, consequences)
		}
	}
	if v := browsertest.Axe(t, ctx); len(v) > 0 {
		t.Errorf("request page: %d serious accessibility violations: %+v", len(v), v)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="reference"]`)),
	)
	if err != nil {
		t.Fatalf("confirm and wait for the reference: %v", err)
	}
	ref, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="reference"]`)))
	done := b.inv(t, inv.ID)
	if done.Result == nil || ref != done.Result.Reference {
		t.Errorf("page shows reference %q, invocation has %+v", ref, done.Result)
	}
	if after, _ := chromedp.Run(ctx, chromedp.Location()); after != location {
		t.Errorf("the page navigated to %q; the outcome should arrive in place", after)
	}
	browsertest.CheckAccessibility(t, ctx, "outcome")
	browsertest.Screenshot(t, ctx, "countersign-confirmation.png")
}
