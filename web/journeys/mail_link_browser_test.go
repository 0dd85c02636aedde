package journeys_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"countersign/internal/accounts"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/mail"
	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// browse runs actions in the browser of ctx for at most 20 seconds and
// fails the test saying what, where the browser stands and what its page
// says when they do not all succeed.
func browse(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		at, _ := chromedp.Run(ctx, chromedp.Location())
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("%s: %v (at %s, saying %q)", what, err, at, webtest.Squash(text))
	}
}

// pageTextOf is the text of the first element sel matches on the page of ctx,
// or "" when there is none.
func pageTextOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const e = document.querySelector(`+
		jsString(sel)+`); return e ? e.innerText : ""; })()`))
	if err != nil {
		t.Fatalf("the text of %s: %v", sel, err)
	}
	return webtest.Squash(text)
}

// countOnPage is how many elements sel matches on the page of ctx.
func countOnPage(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
	if err != nil {
		t.Fatalf("count %s: %v", sel, err)
	}
	return n
}

func jsString(s string) string { raw, _ := json.Marshal(s); return string(raw) }

// anotherBrowser is a second browser context of the Chromium of ctx: its
// own cookies and storage, as a forwarded mail opened on another machine,
// or an assistant's own browser.
func anotherBrowser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	other, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(other); err != nil {
		t.Fatalf("a second browser context: %v", err)
	}
	return other
}

// mailLinkFromThePage presses the link page's "E-mail me a link to
// decide" in the browser of ctx and returns the one mail it sent, with
// the path of its "Review and decide" link, read from the stack's mail.
func mailLinkFromThePage(t *testing.T, ctx context.Context, b *webtest.Stack) (mail.Message, string) {
	t.Helper()
	before := len(b.Mail.Sent())
	// The page after the press says where the mail went; a page that said
	// so already loses its line first, so what is waited for is the next.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelectorAll('[data-testid="link-sent"]').forEach(e => e.remove()) || true`)); err != nil {
		t.Fatal(err)
	}
	browse(t, ctx, "e-mail me a link", chromedp.Click(chromedp.CSS(`[data-testid="send-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="link-sent"]`)))
	return mailedLink(t, b, before)
}

// mailedLink is the one mail sent since the stack had sent before, and
// its link's path.
func mailedLink(t *testing.T, b *webtest.Stack, before int) (mail.Message, string) {
	t.Helper()
	sent := b.Mail.Sent()
	if len(sent) != before+1 {
		t.Fatalf("%d mails sent, want 1", len(sent)-before)
	}
	m := sent[len(sent)-1]
	path := webtest.MailLinkIn.FindString(m.Body)
	if path == "" {
		t.Fatalf("no link in the mail:\n%s", m.Body)
	}
	return m, path
}

// TestBrowserMailLinkDecidesOnceInTheCustomersBrowser: in Chromium, the
// link page mails the request to Jordan; the mail's "Review and decide"
// opens a page with one button, which lands on the request's quote with
// its decisions. The same link opened in a second browser (a forwarded
// mail) is refused with a page saying to use the newest mail, and that
// browser cannot see the request; Jordan confirms in theirs, recorded as
// proven by the link, and the forwarded link then says it is decided. A
// link whose 30 minutes ran out on the test clock, its request still
// open, is refused as expired and decides nothing. axe-core finds
// nothing serious on the link's page nor on its refusal.
func TestBrowserMailLinkDecidesOnceInTheCustomersBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	ctx := browsertest.New(t, 120*time.Second)

	browse(t, ctx, "the confirmation link", chromedp.Navigate(b.Server.URL+link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="send-link"]`)))
	sent, path := mailLinkFromThePage(t, ctx, b)
	if !strings.EqualFold(sent.To, webtest.Jordan) || !strings.Contains(sent.Body, "Walnut desk lamp") {
		t.Fatalf("the mail went to %s, want Jordan's address, with the quote:\n%s", sent.To, sent.Body)
	}
	browse(t, ctx, "the mail's link", chromedp.Navigate(b.Server.URL+path), chromedp.WaitVisible(chromedp.CSS(`[data-testid="mail-link-continue"]`)))
	browsertest.CheckAccessibility(t, ctx, "the mail link's page")
	browse(t, ctx, "continue to the request", chromedp.Click(chromedp.CSS(`[data-testid="mail-link-continue"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)))
	if at, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(at, "/requests/"+inv.ID) {
		t.Errorf("the mail's link landed on %s, want the request's page", at)
	}
	if lines := countOnPage(t, ctx, `[data-testid="quote-line"]`); lines == 0 {
		t.Error("the landing shows no line of the quote")
	}
	// Forwarded before the customer decides: the link was spent.
	forwarded := anotherBrowser(t, ctx)
	browse(t, forwarded, "the forwarded link", chromedp.Navigate(b.Server.URL+path), chromedp.WaitVisible(chromedp.CSS(`[data-testid="link-problem"]`)))
	browsertest.CheckAccessibility(t, forwarded, "a spent mail link's page")
	if n := countOnPage(t, forwarded, `[data-problem="spent"]`); n != 1 || !strings.Contains(pageTextOf(t, forwarded, `[data-testid="link-problem-next"]`), "newest mail") {
		t.Errorf("the forwarded link says %q, want that it was used, and to use the newest mail",
			pageTextOf(t, forwarded, `[data-testid="link-problem"]`))
	}
	if n := countOnPage(t, forwarded, `[data-testid="mail-link-form"]`); n != 0 {
		t.Error("the forwarded link still offers to continue")
	}
	browse(t, forwarded, "the request in the second browser", chromedp.Navigate(b.Server.URL+"/requests/"+inv.ID),
		chromedp.WaitReady(chromedp.CSS(`main`)))
	if n := countOnPage(t, forwarded, `[data-testid="request-title"], [data-testid="confirm"]`); n != 0 {
		t.Errorf("the second browser sees the request:\n%s", pageTextOf(t, forwarded, `main`))
	}

	browse(t, ctx, "confirm", chromedp.Click(chromedp.CSS(`[data-testid="confirm"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="status"]`)))
	if st := b.InvocationState(t, inv.ID); st == controlplane.AwaitingConfirmation {
		t.Fatalf("the request is still %s after the customer confirmed", st)
	}
	if kept := b.Consent(t, inv.ID); kept.Proof != "link" {
		t.Errorf("the decision records the proof %q, want link", kept.Proof)
	}
	// Forwarded after it: the request is decided, the link opens nothing.
	browse(t, forwarded, "the forwarded link after the decision", chromedp.Navigate(b.Server.URL+path),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="link-problem"]`)))
	if countOnPage(t, forwarded, `[data-problem="decided"]`) != 1 || countOnPage(t, forwarded, `[data-testid="mail-link-form"]`) != 0 {
		t.Errorf("the forwarded link after the decision says %q", pageTextOf(t, forwarded, `[data-testid="link-problem"]`))
	}

	// The next request waits two hours for Jordan, so what runs out is the
	// mail's link alone.
	m := b.Users[accounts.Manager]
	p, err := b.Control.Policy(t.Context(), "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	p.ConfirmationWindow = 2 * time.Hour
	if _, err := b.Control.ChangePolicy(t.Context(), controlplane.UserActor(m.ID, string(accounts.Manager), m.Name), p, p.Version,
		"a window longer than the mail's link"); err != nil {
		t.Fatal(err)
	}
	next, nextLink := b.PendingRefund(t)
	browse(t, ctx, "the next request's link", chromedp.Navigate(b.Server.URL+nextLink), chromedp.WaitVisible(chromedp.CSS(`[data-testid="send-link"]`)))
	_, expiring := mailLinkFromThePage(t, ctx, b)
	b.Clock.Advance(confirmation.MailLinkLifetime)
	browse(t, ctx, "an expired link", chromedp.Navigate(b.Server.URL+expiring), chromedp.WaitVisible(chromedp.CSS(`[data-testid="link-problem"]`)))
	if n := countOnPage(t, ctx, `[data-problem="expired"]`); n != 1 || countOnPage(t, ctx, `[data-testid="mail-link-form"]`) != 0 {
		t.Errorf("an expired link says %q, want that it expired, with no button", pageTextOf(t, ctx, `[data-testid="link-problem"]`))
	}
	if st := b.InvocationState(t, next.ID); st != controlplane.AwaitingConfirmation {
		t.Errorf("the request of the expired link is %s, want still awaiting the customer", st)
	}
}

// TestBrowserMailLinkAfterARequoteSaysWhatChanged: Jordan is mailed the
// request twice and opens the second mail in Chromium; the shop refunds
// part of the order in the meantime, so confirming quotes the request
// again, and a new mail with the new quote goes to Jordan. The first
// mail's link, opened in a browser, says what changed, shows the quote it
// was sent with and the one now, and offers nothing to press; the new
// mail's link lands on the new request.
func TestBrowserMailLinkAfterARequoteSaysWhatChanged(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	ctx := browsertest.New(t, 120*time.Second)

	browse(t, ctx, "the confirmation link", chromedp.Navigate(b.Server.URL+link), chromedp.WaitVisible(chromedp.CSS(`[data-testid="send-link"]`)))
	_, old := mailLinkFromThePage(t, ctx, b)
	_, path := mailLinkFromThePage(t, ctx, b)
	browse(t, ctx, "the second mail's link", chromedp.Navigate(b.Server.URL+path),
		chromedp.Click(chromedp.CSS(`[data-testid="mail-link-continue"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)))

	body, _ := json.Marshal(map[string]any{"order_id": inv.Target.ID, "amount_cents": 500, "reason": "goodwill, by phone"})
	req, _ := http.NewRequest(http.MethodPost, b.ShopURL+"/refunds", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.Shop.Token())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	before := len(b.Mail.Sent())
	browse(t, ctx, "confirm a quote gone stale", chromedp.Click(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="changed"]`)))
	// htmx swapped the new request's page in: its confirmation is another
	// request's.
	if action, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('form[action$="/confirm"]').getAttribute("action")`)); action == "/requests/"+inv.ID+"/confirm" {
		t.Errorf("after the re-quote the page still confirms the old request (%s), want the new one", action)
	}
	// The re-quote hands its mail to the outbox (the stack runs no loop):
	// send what waits, as the console's loop does.
	if _, err := b.Links.MailWaiting(t.Context()); err != nil {
		t.Fatal(err)
	}
	sent, fresh := mailedLink(t, b, before)
	if !strings.EqualFold(sent.To, webtest.Jordan) || !strings.Contains(sent.Body, "The details of this request changed") {
		t.Fatalf("the re-quote's mail to %s says:\n%s", sent.To, sent.Body)
	}
	if st := b.InvocationState(t, inv.ID); st == controlplane.AwaitingConfirmation {
		t.Fatalf("the re-quoted request still awaits the customer")
	}

	other := anotherBrowser(t, ctx)
	browse(t, other, "the first mail's link", chromedp.Navigate(b.Server.URL+old), chromedp.WaitVisible(chromedp.CSS(`[data-testid="link-problem"]`)))
	browsertest.CheckAccessibility(t, other, "an old mail link's page after a re-quote")
	if countOnPage(t, other, `[data-problem="changed"]`) != 1 || countOnPage(t, other, `[data-testid="change"]`) == 0 ||
		countOnPage(t, other, `[data-testid="quote-was"] li`) == 0 || countOnPage(t, other, `[data-testid="quote-now"] li`) == 0 {
		t.Errorf("the old mail's link says %q, want what changed, the quote it showed and the one now",
			pageTextOf(t, other, `[data-testid="link-problem"]`))
	}
	if countOnPage(t, other, `[data-testid="mail-link-form"]`) != 0 {
		t.Error("the old mail's link still offers to continue")
	}
	browse(t, other, "the new mail's link", chromedp.Navigate(b.Server.URL+fresh),
		chromedp.Click(chromedp.CSS(`[data-testid="mail-link-continue"]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)))
	at, _ := chromedp.Run(other, chromedp.Location())
	if next := at[strings.LastIndex(at, "/")+1:]; !strings.Contains(at, "/requests/") || next == inv.ID {
		t.Errorf("the new mail's link landed on %s, want the new request", at)
	}
}
