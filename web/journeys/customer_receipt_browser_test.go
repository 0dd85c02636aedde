package journeys_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// TestBrowserCustomerReceiptIsForPeople: once Jordan's confirmed refund is
// done, the page's receipt in headless Chromium is axe clean at desktop and
// phone width, offers "Print this receipt" (it needs JavaScript, so it is
// hidden without), reaches the print button and the signed file by
// keyboard, and printed shows the receipt alone: no decision forms, no
// download, not the quote above it.
func TestBrowserCustomerReceiptIsForPeople(t *testing.T) {
	t.Parallel()
	// The shop takes typed codes here: the browser proves with one.
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes())
	_, link := b.PendingRefund(t)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.Control.RunDispatcher(runCtx, 50*time.Millisecond)

	ctx := browsertest.New(t, 90*time.Second)
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+link),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="send-code"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="send-code"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#code`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	mails := b.Mail.Sent()
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#code`), webtest.CodeIn.FindString(mails[len(mails)-1].Body)),
		chromedp.Click(chromedp.CSS(`[data-testid="verify"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="receipt-who"]`)),
	)
	if err != nil {
		t.Fatalf("prove, confirm and wait for the receipt: %v", err)
	}
	for _, w := range []struct {
		name     string
		viewport chromedp.Action[chromedp.Void]
	}{{"desktop", chromedp.EmulateViewport(1280, 900)}, {"phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)}} {
		if err := chromedp.Do(ctx, w.viewport); err != nil {
			t.Fatal(err)
		}
		browsertest.CheckAccessibility(t, ctx, "receipt at "+w.name+" width")
		browsertest.Screenshot(t, ctx, "customer-receipt-"+w.name+".png")
	}
	if shown, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.querySelector('[data-testid="receipt-print"]').hidden`)); !shown {
		t.Error("the print button stays hidden with JavaScript on")
	}
	// Keyboard: tabbing from the receipt's heading reaches the print
	// button, then the signed file.
	reached, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const order = [...document.querySelectorAll('a[href], button:not([hidden]), input:not([type=hidden]), textarea')].filter(e => e.tabIndex >= 0 && e.offsetParent !== null);
		return order.map(e => e.dataset.testid || '').filter(id => id.startsWith('receipt-'));
	})()`))
	if len(reached) != 2 || reached[0] != "receipt-print" || reached[1] != "receipt-download" {
		t.Errorf("the receipt's controls in tab order: %v, want the print button then the signed file", reached)
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatal(err)
	}
	printed, _ := chromedp.Run(ctx, chromedp.Evaluate[map[string]bool](`(() => {
		const seen = sel => { const e = document.querySelector(sel); return !!e && e.offsetParent !== null; };
		return {receipt: seen('[data-testid="receipt"]'), who: seen('[data-testid="receipt-who"]'), quote: seen('[data-testid="quote-lines"], .customer-request > section:not(.receipt)'),
			title: seen('#request-title'), download: seen('[data-testid="receipt-download"]'), print: seen('[data-testid="receipt-print"]'), shop: seen('.customer-brand')};
	})()`))
	want := map[string]bool{"receipt": true, "who": true, "shop": true, "quote": false, "title": false, "download": false, "print": false}
	for k, v := range want {
		if printed[k] != v {
			t.Errorf("printed, %s shown = %v, want %v (all: %v)", k, printed[k], v, printed)
		}
	}
	browsertest.Screenshot(t, ctx, "customer-receipt-print.png")
}
