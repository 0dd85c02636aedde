package journeys_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/chromedp/chromedp"

	"countersign/web/browsertest"
)

// timeWithZone is a time as customer pages write it, its zone named
// ("11:30 CEST", "09:30 UTC").
var timeWithZone = regexp.MustCompile(`\b\d{2}:\d{2} [A-Z][A-Za-z]{1,4}\b`)

// TestBrowserCustomerConfirms opens a confirmation link in headless
// Chromium, reads the consequences, confirms, and sees the reference
// without reloading; axe-core finds no serious or critical violation on
// the page before and after. The screenshot is kept under the temp dir.
func TestBrowserCustomerConfirms(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithTypedCodes(), webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.Control.RunDispatcher(runCtx, 50*time.Millisecond)

	ctx := browsertest.New(t, 90*time.Second)
	err := chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+link),
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
	sent := len(b.Mail.Sent())
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="send-code"]`)), chromedp.WaitVisible(chromedp.CSS(`#code`))); err != nil {
		t.Fatalf("send a code: %v", err)
	}
	// The code box is styled as a field (its type lets the stylesheet
	// reach it: unstyled it was a 180×20 px box), at both widths.
	for _, w := range []struct {
		name     string
		viewport chromedp.Action[chromedp.Void]
	}{{"desktop", chromedp.EmulateViewport(1280, 900)}, {"phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)}} {
		if err := chromedp.Do(ctx, w.viewport); err != nil {
			t.Fatal(err)
		}
		box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.querySelector('#code').getBoundingClientRect(); return [r.width, r.height]; })()`))
		if err != nil || len(box) != 2 || box[1] < 36 || box[0] < 120 {
			t.Errorf("the code box at %s width is %v px (err %v), want a field at least 120×36", w.name, box, err)
		}
		browsertest.Screenshot(t, ctx, "customer-code-"+w.name+".png")
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	mails := b.Mail.Sent()
	if len(mails) != sent+1 {
		t.Fatalf("%d mails sent, want 1", len(mails)-sent)
	}
	code := webtest.CodeIn.FindString(mails[len(mails)-1].Body)
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
	done := b.Invocation(t, inv.ID)
	if done.Result == nil || ref != done.Result.ShortReference {
		t.Errorf("page shows reference %q, invocation has %+v", ref, done.Result)
	}
	if after, _ := chromedp.Run(ctx, chromedp.Location()); after != location {
		t.Errorf("the page navigated to %q; the outcome should arrive in place", after)
	}
	browsertest.CheckAccessibility(t, ctx, "outcome")
	browsertest.Screenshot(t, ctx, "countersign-confirmation.png")
}

// TestBrowserCustomerPages walks Jordan's pages in headless Chromium as
// Jordan would, at desktop and phone width: a partial refund of a $101
// order with $12 shipping (the breakdown adds up, says why and when the
// money arrives, names the order by number, date and items), a
// cancellation (proved with its own code), the page after confirming (the
// short reference), and My requests: with a code, only the request it was
// for; signed in to the account, all of them (waiting first). Each page state is checked with axe and saved as
// a screenshot.
func TestBrowserCustomerPages(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithTypedCodes(), webtest.WithShop(), webtest.WithCustomerStage())
	task := b.CustomerTask(t, webtest.Jordan)
	refund := b.ProposeFor(t, task, "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}, "Refund $42.10 for the lamp.")
	cancel := b.ProposeFor(t, task, "cancel_subscription",
		map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"}, "")
	receipt := b.ProposeFor(t, task, "resend_receipt", map[string]any{"invoice_id": "paid Pro invoice"}, "")
	link := b.Link(t, refund, webtest.Jordan)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.Control.RunDispatcher(runCtx, 50*time.Millisecond)

	ctx := browsertest.New(t, 150*time.Second)
	desktop := chromedp.EmulateViewport(1280, 900)
	phone := chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)
	noSideways := func(page string) {
		t.Helper()
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
		if err != nil || wide {
			t.Errorf("%s scrolls sideways at phone width (err %v)", page, err)
		}
	}
	// shoot saves the page at desktop and phone width, with axe on each.
	shoot := func(page, name string) {
		t.Helper()
		if err := chromedp.Do(ctx, desktop); err != nil {
			t.Fatal(err)
		}
		browsertest.CheckAccessibility(t, ctx, page+" (desktop)")
		browsertest.Screenshot(t, ctx, name+"-desktop.png")
		if err := chromedp.Do(ctx, phone); err != nil {
			t.Fatal(err)
		}
		noSideways(page)
		browsertest.CheckAccessibility(t, ctx, page+" (phone)")
		browsertest.Screenshot(t, ctx, name+"-phone.png")
		if err := chromedp.Do(ctx, desktop); err != nil {
			t.Fatal(err)
		}
	}

	// prove shows it's Jordan on a link page with the code mailed for it:
	// a code decides only the request it was sent for.
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
		code := webtest.CodeIn.FindString(mails[len(mails)-1].Body)
		err = chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS(`#code`), code),
			chromedp.Click(chromedp.CSS(`[data-testid="verify"]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
		)
		if err != nil {
			t.Fatalf("enter the code: %v", err)
		}
	}
	prove(link)
	// The refund: what the reader sees first is the question, the order
	// by its number, date and items, and a breakdown that adds up.
	title, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="request-title"]`)))
	if title != "Refund $42.10 for your Walnut desk lamp?" {
		t.Errorf("title %q", title)
	}
	sums, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const cents = s => { const neg = /^[−-]/.test(s); const n = Math.round(parseFloat(s.replace(/[^0-9.]/g, "")) * 100); return neg ? -n : n; };
		let running = 0, ok = true;
		for (const line of document.querySelectorAll('[data-testid="quote-line"]')) {
			const n = cents(line.querySelector('[data-testid="line-to"]').textContent.trim());
			if (Number.isNaN(n)) continue; // the reason, in words
			if (line.dataset.sum === "true") { ok = ok && n === running; } else { running += n; }
		}
		return ok;
	})()`))
	if err != nil || !sums {
		t.Errorf("the breakdown in Chromium does not add up (err %v)", err)
	}
	body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	for _, want := range []string{"Order #", "Walnut desk lamp × 1", "Shipping isn't refunded when an item arrived damaged", "−$12.00", "5–10 business days", "Why this amount"} {
		if !strings.Contains(body, want) {
			t.Errorf("the refund page does not show %q", want)
		}
	}
	for _, not := range []string{refund.Quote.Target.ID, "$0.00", "Already refunded"} {
		if strings.Contains(body, not) {
			t.Errorf("the refund page shows %q", not)
		}
	}
	shoot("refund", "customer-refund")

	// Confirm the refund: the outcome arrives in place with the reference
	// the shop gives its customers, not its id.
	err = chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/requests/"+refund.ID),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.Focus(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="reference"]`)),
	)
	if err != nil {
		t.Fatalf("confirm the refund: %v", err)
	}
	ref, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="reference"]`)))
	done := b.Invocation(t, refund.ID)
	if done.Result == nil || ref != done.Result.ShortReference || !strings.HasPrefix(ref, "#") || strings.Contains(ref, "re_") {
		t.Errorf("the page shows reference %q; the result is %+v", ref, done.Result)
	}
	// After confirming, the outcome is what the reader sees first: above
	// the details of what was confirmed, with when the money arrives.
	above, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('[data-testid="status"]').getBoundingClientRect().top < document.querySelector('.quote').getBoundingClientRect().top`))
	if err != nil || !above {
		t.Errorf("the outcome is not above the details (err %v)", err)
	}
	if detail, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="status-detail"]`))); !strings.Contains(detail, "5–10 business days") {
		t.Errorf("the outcome does not say when the money arrives: %q", detail)
	}
	shoot("after confirming", "customer-after-confirm")

	// The cancellation needs its own proof: the refund's code decides the
	// refund only.
	prove(b.Link(t, cancel, webtest.Jordan))
	shoot("cancellation", "customer-cancellation")

	// Decline the receipt, so My requests has something done.
	prove(b.Link(t, receipt, webtest.Jordan))
	err = chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/requests/"+receipt.ID),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="decline"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="decline"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="status-badge"]`)),
	)
	if err != nil {
		t.Fatalf("decline the receipt: %v", err)
	}
	// Declined: the customer's own decline, and what would have happened
	// folded away, never as a fact.
	declined, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	if !strings.Contains(declined, "You declined this request.") || strings.Contains(declined, "What this means for you") {
		t.Errorf("the declined page reads %q", declined)
	}
	shoot("declined", "customer-declined")

	// My requests with the receipt's code lists the receipt only; signed in
	// to Jordan's account it lists them all, waiting first.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="my-requests-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="only-proved"]`)),
	)
	if err != nil {
		t.Fatalf("see your requests: %v", err)
	}
	location, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.HasSuffix(location, "/requests") {
		t.Errorf("See your requests led to %q", location)
	}
	rows, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="request-row"]').length`))
	if rows != 1 {
		t.Errorf("My requests with one request's code lists %d requests, want 1", rows)
	}
	acct := b.CustomerAccount(t, webtest.Jordan)
	err = chromedp.Do(ctx,
		chromedp.Navigate(b.Server.URL+"/sign-in?next=%2Frequests"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), acct.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), acct.Password),
		chromedp.Submit(chromedp.CSS(`#password`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="waiting"] [data-testid="request-row"]`)),
	)
	if err != nil {
		t.Fatalf("sign in to see all requests: %v", err)
	}
	first, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="request-row"]').dataset.id`))
	if first != cancel.ID {
		t.Errorf("the first request listed is %s, want the cancellation waiting for Jordan", first)
	}
	list, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	if !strings.Contains(list, "Waiting for you to confirm") || strings.Contains(list, "Awaiting customer") || !timeWithZone.MatchString(list) ||
		!strings.Contains(list, "You declined") || strings.Contains(list, "Rejected") {
		t.Errorf("My requests reads %q", list)
	}
	shoot("my requests", "customer-my-requests")
}
