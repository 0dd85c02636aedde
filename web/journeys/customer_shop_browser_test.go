package journeys_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"countersign/web/browsertest"
)

// TestBrowserCustomerShopPages walks Jordan's pages in headless Chromium
// whose zone is Europe/Paris, at desktop and phone width, with axe on
// each: the request page speaks for the shop (its name in the header and
// the title, times in the shop's zone until the browser has told its own,
// then in Paris time, said so in the footer); the address change stacks
// "Now" over "After"; the completed refund has its receipt; My requests
// groups waiting, in progress and done, without the catalogue edit.
func TestBrowserCustomerShopPages(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithTypedCodes(), webtest.WithShop(), webtest.WithCustomerStage())
	task := b.CustomerTask(t, webtest.Jordan)
	refund := b.ProposeFor(t, task, "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}, "")
	address := b.ProposeFor(t, task, "change_shipping_address", map[string]any{"order_id": "standing desk mat", "address": webtest.JordanAddress}, "")
	catalogue := b.ProposeFor(t, task, "update_product_description", map[string]any{"product_id": "walnut lamp", "description": "Solid walnut, linen shade."}, "")
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.Control.RunDispatcher(runCtx, 50*time.Millisecond)

	ctx := browsertest.New(t, 240*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Europe/Paris"}); err != nil {
		t.Fatal(err)
	}
	desktop := chromedp.EmulateViewport(1280, 900)
	phone := chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)
	at := func(narrow bool, page, name string) {
		t.Helper()
		width := desktop
		if narrow {
			width = phone
		}
		if err := chromedp.Do(ctx, width); err != nil {
			t.Fatal(err)
		}
		if wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); err != nil || wide {
			t.Errorf("%s scrolls sideways (err %v)", page, err)
		}
		browsertest.CheckAccessibility(t, ctx, page)
		browsertest.Screenshot(t, ctx, name)
	}
	prove := func(link string) {
		t.Helper()
		err := chromedp.Do(ctx, desktop,
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
		)
		if err != nil {
			t.Fatalf("enter the code: %v", err)
		}
	}
	textOf := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		// The zone is isolated in its sentence (U+2068 … U+2069), as a
		// right-to-left page needs.
		return strings.Join(strings.Fields(strings.NewReplacer("\u2068", "", "\u2069", "").Replace(s)), " ")
	}

	// The link page is the first page: the shop's zone, named.
	if err := chromedp.Do(ctx, desktop, chromedp.Navigate(b.Server.URL+b.Link(t, refund, webtest.Jordan)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="time-zone"]`))); err != nil {
		t.Fatal(err)
	}
	if z := textOf(`[data-testid="time-zone"]`); z != "Times are in America/Los_Angeles time." {
		t.Errorf("the first page's zone: %q", z)
	}
	prove(b.Link(t, refund, webtest.Jordan))
	if brand := textOf(`[data-testid="brand-name"]`); brand != webtest.ShopName {
		t.Errorf("header %q", brand)
	}
	title, _ := chromedp.Run(ctx, chromedp.Title())
	if title != "Refund $42.10 for your Walnut desk lamp · "+webtest.ShopName {
		t.Errorf("title %q", title)
	}
	if z := textOf(`[data-testid="time-zone"]`); z != "Times are in your time zone (Europe/Paris)." {
		t.Errorf("after the browser told its zone: %q", z)
	}
	if d := textOf(`[data-testid="deadline"]`); !strings.Contains(d, "CEST") {
		t.Errorf("deadline %q, want Paris time", d)
	}
	at(false, "request (desktop)", "customer-request-desktop.png")
	at(true, "request (phone)", "customer-request-phone.png")

	// Confirm the refund: once done, its receipt.
	err := chromedp.Do(ctx, desktop,
		chromedp.Navigate(b.Server.URL+"/requests/"+refund.ID),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="reference"]`)),
		chromedp.Navigate(b.Server.URL+"/requests/"+refund.ID),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="receipt"]`)),
	)
	if err != nil {
		t.Fatalf("confirm the refund and see its receipt: %v", err)
	}
	if v := textOf(`[data-testid="receipt-verified"]`); !strings.Contains(v, "CEST") {
		t.Errorf("verified %q, want Paris time", v)
	}
	at(false, "receipt (desktop)", "customer-receipt-desktop.png")

	// The address change at phone width: "Now" above "After".
	prove(b.Link(t, address, webtest.Jordan))
	if err := chromedp.Do(ctx, phone); err != nil {
		t.Fatal(err)
	}
	stacked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const dts = document.querySelectorAll('[data-testid="now-after"] dt');
		return dts.length === 2 && dts[0].textContent === "Now" && dts[1].textContent === "After" &&
			dts[0].getBoundingClientRect().bottom <= dts[1].getBoundingClientRect().top;
	})()`))
	if err != nil || !stacked {
		t.Errorf("the address change does not stack Now over After (err %v)", err)
	}
	at(true, "address change (phone)", "customer-address-change-phone.png")

	// A second refund of the lamp, prepared later: its row tells it apart.
	b.Clock.Advance(2 * time.Minute)
	again := b.ProposeAny(t, b.CustomerTask(t, webtest.Jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 1000, "reason_code": "damaged"})
	acct := b.CustomerAccount(t, webtest.Jordan)
	err = chromedp.Do(ctx, desktop,
		chromedp.Navigate(b.Server.URL+"/sign-in?next=%2Frequests"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), acct.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), acct.Password),
		chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="done"] [data-testid="request-row"]`)),
	)
	if err != nil {
		t.Fatalf("sign in to see all requests: %v", err)
	}
	list := textOf(`main`)
	if !strings.Contains(list, "Waiting for you") || !strings.Contains(list, "Finished") || strings.Contains(list, "Earlier") {
		t.Errorf("My requests reads %q", list)
	}
	ids, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="request-row"]')].map(r => r.dataset.id).join(",")`))
	if strings.Contains(ids, catalogue.ID) || !strings.Contains(ids, again.ID) {
		t.Errorf("My requests lists %s: want the second refund and not the catalogue edit %s", ids, catalogue.ID)
	}
	at(false, "my requests (desktop)", "customer-requests-list-desktop.png")
	at(true, "my requests (phone)", "customer-requests-list-phone.png")
}
