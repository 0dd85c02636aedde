package customer_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/web/webtest"
)

// TestTheMailLinkLandsOnTheQuote: a mail scanner fetches the mail's link
// first and proves nothing; the customer's browser presses the page's
// button and lands on the request page, its quote and its decision, with a
// session proven by "link", which the decision records.
func TestTheMailLinkLandsOnTheQuote(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	path := c.MailLink(link, c.Get(link))

	scanner := b.Client(t)
	for i := 0; i < 2; i++ {
		page := scanner.Get(path)
		if page.StatusCode != http.StatusOK || page.Doc(t).Find(`[data-testid="mail-link-form"]`).Length() != 1 {
			t.Fatalf("the scanner's fetch %d: %d without the button\n%s", i, page.StatusCode, page.Text)
		}
		// The layout names the business after the page's own title, once.
		if title := page.Doc(t).Find("title").Text(); title != "Review and decide · Harbour & Pine" {
			t.Errorf("the mail link page's title is %q, want the business named once", title)
		}
	}
	if res := scanner.Get("/requests/" + inv.ID); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the scanner's session on the request: %d, want 401", res.StatusCode)
	}

	page := c.SpendMailLink(path)
	if page.Doc(t).Find(`form[action="/requests/`+inv.ID+`/confirm"]`).Length() != 1 ||
		!strings.Contains(webtest.TextByTestID(page, t, "request-title"), "Walnut desk lamp") {
		t.Fatalf("the landing is not the request's quote with its decision:\n%s", page.Text)
	}
	if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
	}
	events, err := b.Control.Timeline(t.Context(), inv.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	var proof any
	for _, e := range events {
		if e.Action == "invocation.confirmed" {
			proof = e.Data["proof"]
		}
	}
	if proof != "link" {
		t.Errorf("the confirmation records the proof %v, want link", proof)
	}
}

// TestAForwardedMailLinkIsRefusedTheSecondTime: a link opened and spent
// once is refused in a second browser (a forwarded mail), saying to use
// the newest mail, and proves nothing there; the browser that spent it is
// sent on to its request. A link whose time ran out says it expired.
func TestAForwardedMailLinkIsRefusedTheSecondTime(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	path := c.MailLink(link, c.Get(link))
	c.SpendMailLink(path)

	other := b.Client(t)
	page := other.Get(path)
	if page.StatusCode != http.StatusGone || page.Doc(t).Find(`[data-problem="spent"]`).Length() != 1 ||
		!strings.Contains(webtest.TextByTestID(page, t, "link-problem-next"), "newest mail") {
		t.Errorf("a spent link in another browser: %d, want 410 saying to use the newest mail\n%s", page.StatusCode, page.Text)
	}
	tok, _ := other.Get(link).Doc(t).Find(`input[name="_csrf"]`).First().Attr("value")
	if res := other.Post(path, url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusGone {
		t.Errorf("spending it a second time: %d, want 410", res.StatusCode)
	}
	if res := other.Get("/requests/" + inv.ID); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the second browser on the request: %d, want 401", res.StatusCode)
	}
	if res := c.Get(path); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
		t.Errorf("the customer's own browser back on the spent link: %d to %q, want their request", res.StatusCode, res.Header.Get("Location"))
	}

	// The request's own time to decide outlives the link's, so only the
	// link's lifetime can make its page say it expired.
	m := b.Users[accounts.Manager]
	pol, err := b.Control.Policy(t.Context(), "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	pol.ConfirmationWindow = 4 * confirmation.MailLinkLifetime
	if _, err := b.Control.ChangePolicy(t.Context(), controlplane.UserActor(m.ID, string(accounts.Manager), m.Name), pol, pol.Version,
		"the request outlives its mail link"); err != nil {
		t.Fatal(err)
	}
	longer, longerLink := b.PendingRefund(t)
	late := b.Client(t)
	expiring := late.MailLink(longerLink, late.Get(longerLink))
	b.Clock.Advance(confirmation.MailLinkLifetime)
	if now, err := b.Control.Invocation(t.Context(), longer.ID); err != nil || now.State != controlplane.AwaitingConfirmation ||
		now.DeadlineAt == nil || !b.Clock.Now().Before(*now.DeadlineAt) {
		t.Fatalf("the request should still await its customer when its mail link expires: %+v, %v", now, err)
	}
	if page := late.Get(expiring); page.StatusCode != http.StatusGone || page.Doc(t).Find(`[data-problem="expired"]`).Length() != 1 {
		t.Errorf("an expired link: %d, want 410 saying it expired\n%s", page.StatusCode, page.Text)
	}
}

// TestARequoteMailsTheNewQuoteAndTheOldLinkExplains: confirming after the
// shop's order changed replaces the request with a fresh quote and
// answers at once, leaving the fresh quote's mail to the console's mail
// loop; an old mail's link says what changed — the quote it showed and
// the one now — and proves nothing, and says "we e-mailed you" the new
// quote only once that mail went (on its way before; not sent when the
// mail server failed); the new mail's link lands on the fresh request.
func TestARequoteMailsTheNewQuoteAndTheOldLinkExplains(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	old := c.MailLink(link, c.Get(link))
	page := c.Open(link)

	refundAtTheShop(t, b, inv.Target.ID, 500, "goodwill, in another tab")
	before := len(b.Mail.Sent())
	next := confirmStale(t, c, inv.ID, page)
	if sent := len(b.Mail.Sent()); sent != before {
		t.Errorf("the confirmation sent %d mails itself, want the fresh quote's left to the mail loop", sent-before)
	}
	stranger := b.Client(t)
	oldSays := func(want string) {
		t.Helper()
		was := stranger.Get(old)
		if got := webtest.TextByTestID(was, t, "link-problem-next"); !strings.Contains(got, want) {
			t.Errorf("the old mail's link says %q, want %q", got, want)
		}
	}
	oldSays("We are e-mailing you the request as it stands now")
	if _, err := b.Links.MailWaiting(t.Context()); err != nil {
		t.Fatal(err)
	}
	sent := b.Mail.Sent()
	if len(sent) != before+1 || !strings.Contains(sent[len(sent)-1].Body, "The details of this request changed") {
		t.Fatalf("%d mails after the re-quote and a pass of the mail loop, want one with the fresh quote", len(sent)-before)
	}
	fresh := webtest.MailLinkIn.FindString(sent[len(sent)-1].Body)

	was := stranger.Get(old)
	if was.StatusCode != http.StatusConflict || was.Doc(t).Find(`[data-problem="changed"]`).Length() != 1 ||
		was.Doc(t).Find(`[data-testid="change"]`).Length() == 0 || was.Doc(t).Find(`[data-testid="quote-was"] li`).Length() == 0 ||
		was.Doc(t).Find(`[data-testid="quote-now"] li`).Length() == 0 {
		t.Errorf("the old mail's link: %d, want 409 saying what changed, the old quote and the new\n%s", was.StatusCode, was.Text)
	}
	oldSays("We e-mailed you the request as it stands now")
	if was.Doc(t).Find(`[data-testid="mail-link-form"]`).Length() != 0 {
		t.Error("the old mail's link still offers to continue")
	}
	if res := stranger.Get("/requests/" + next); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the fresh request after the old link: %d, want 401", res.StatusCode)
	}
	landing := stranger.SpendMailLink(fresh)
	if landing.Doc(t).Find(`form[action="/requests/`+next+`/confirm"]`).Length() != 1 {
		t.Errorf("the new mail's link does not land on the fresh request:\n%s", landing.Text)
	}
}

// TestAnOldMailSaysWhenTheNewQuoteWasNotMailed: when the mail server
// failed to take the fresh quote's mail, an old mail's link does not say
// "we e-mailed you": it says it was not mailed and what to do instead.
func TestAnOldMailSaysWhenTheNewQuoteWasNotMailed(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	old := c.MailLink(link, c.Get(link))
	page := c.Open(link)
	refundAtTheShop(t, b, inv.Target.ID, 500, "goodwill, in another tab")
	confirmStale(t, c, inv.ID, page)
	b.Mail.Fail(errors.New("mail server down"))
	if _, err := b.Links.MailWaiting(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := webtest.TextByTestID(b.Client(t).Get(old), t, "link-problem-next")
	if strings.Contains(got, "We e-mailed you") || strings.Contains(got, "e-mailing you") ||
		!strings.Contains(got, "We have not e-mailed you") || !strings.Contains(got, "sign in") {
		t.Errorf("the old mail's link after the new quote's mail failed says %q; want that it was not mailed and what to do", got)
	}
}

// TestTheMailButtonSaysWhetherTheMailWent: "E-mail me a link to decide"
// says "We e-mailed the request to …" only after a mail went; when the
// mail server fails the page says so and what to do, and no longer shows
// an earlier mail's "We e-mailed".
func TestTheMailButtonSaysWhetherTheMailWent(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	_, link := b.PendingRefund(t)
	c := b.Client(t)
	c.MailLink(link, c.Get(link))
	page := c.Get(link)
	if page.Doc(t).Find(`[data-testid="link-sent"]`).Length() != 1 {
		t.Fatalf("after a mail went the page does not say so:\n%s", page.Text)
	}
	b.Mail.Fail(errors.New("mail server down"))
	tok, _ := page.Doc(t).Find(`[data-testid="send-link-form"] input[name="_csrf"]`).Attr("value")
	res := c.Post(link+"/mail", url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusBadGateway {
		t.Errorf("a mail the server refused: %d, want 502", res.StatusCode)
	}
	if res.Doc(t).Find(`[data-testid="link-sent"]`).Length() != 0 {
		t.Errorf("the page says a mail went when it did not:\n%s", res.Text)
	}
	if got := webtest.TextByTestID(res, t, "prove-problem"); !strings.Contains(got, "could not send the mail") || !strings.Contains(got, "Try again") {
		t.Errorf("the page says %q, want that the mail did not go and what to do", got)
	}
	if again := c.Get(link); again.Doc(t).Find(`[data-testid="link-sent"]`).Length() != 0 {
		t.Errorf("the page, opened again, still says a mail went")
	}
}

// TestAMailLinkDecidesOnlyItsRequest: the browser that spent request A's
// mail link can neither see nor decide request B of the same customer.
func TestAMailLinkDecidesOnlyItsRequest(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	a, bb := twoRequests(t, b)
	c := b.Client(t)
	c.Open(b.Link(t, a, webtest.Jordan))
	if res := c.Get("/requests/" + bb.ID); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("request B with A's mail link: %d, want 401", res.StatusCode)
	}
	refusedEverywhere(t, b, c, bb, http.StatusUnauthorized, "Each request needs its own proof")
}

// TestAHostileAssistantCannotDecideWithoutTheMailbox: an assistant with
// its API key proposes, reads next (the link, the proofs: no code), and
// with its own HTTP client fetches next.url and posts every form it can:
// a code (codes are off: none is offered, one posted is refused), the
// decision routes, the next.url token as a mail link, a guessed mail link.
// It may have the console mail the customer, but the mail goes to the
// contact on file. Were it handed the mail link's address, its fetch of
// the page proves nothing either. Nothing leaves for the shop.
func TestAHostileAssistantCannotDecideWithoutTheMailbox(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.StageForCustomer(t, "issue_refund")
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"action": "issue_refund",
		"args": map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}}).Want(t, http.StatusCreated)
	id := res.JSON["id"].(string)
	next := res.JSON["next"].(map[string]any)
	link := strings.TrimPrefix(next["url"].(string), b.Server.URL)
	if proofs, _ := json.Marshal(next["proofs"]); string(proofs) != `["link","account","passkey"]` {
		t.Errorf("next.proofs = %s, want the mail link and the account", proofs)
	}
	if msg, _ := next["message"].(string); strings.Contains(msg, "code") {
		t.Errorf("next.message speaks of a code: %q", msg)
	}

	asst := b.Client(t)
	page := asst.Get(link)
	if page.Doc(t).Find(`[data-testid="send-code-form"], [data-testid="code-form"], input[name="code"]`).Length() != 0 {
		t.Errorf("the link page offers a code where codes are off:\n%s", page.Text)
	}
	tok, _ := page.Doc(t).Find(`input[name="_csrf"]`).First().Attr("value")
	for path, want := range map[string]int{link + "/code": http.StatusForbidden, link + "/verify": http.StatusForbidden,
		"/requests/" + id + "/confirm": http.StatusUnauthorized, "/requests/" + id + "/decline": http.StatusUnauthorized,
		"/requests/" + id + "/stop": http.StatusUnauthorized} {
		if res := asst.Post(path, url.Values{"_csrf": {tok}, "code": {"123456"}}); res.StatusCode != want {
			t.Errorf("POST %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	before := len(b.Mail.Sent())
	if res := asst.Post(link+"/mail", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("asking for the mail: %d", res.StatusCode)
	}
	sent := b.Mail.Sent()
	if len(sent) != before+1 || !strings.EqualFold(sent[len(sent)-1].To, webtest.Jordan) {
		t.Fatalf("the mail went to %v, want the contact on file only", sent[before:])
	}
	selector := strings.TrimPrefix(link, confirmation.PathPrefix)
	tok, _ = asst.Get(link).Doc(t).Find(`input[name="_csrf"]`).First().Attr("value")
	for _, guess := range []string{"/m/" + strings.ReplaceAll(selector, ".", ""), "/m/" + strings.Repeat("A", 43)} {
		if res := asst.Get(guess); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", guess, res.StatusCode)
		}
		if res := asst.Post(guess, url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404\n%s", guess, res.StatusCode, res.Text)
		}
	}
	mailed := webtest.MailLinkIn.FindString(sent[len(sent)-1].Body)
	if res := asst.Get(mailed); res.StatusCode != http.StatusOK {
		t.Fatalf("the mail link's page: %d", res.StatusCode)
	}
	if res := asst.Get("/requests/" + id); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the request after fetching the mail link's page: %d, want 401", res.StatusCode)
	}
	if got := b.Invocation(t, id).State; got != controlplane.AwaitingConfirmation {
		t.Fatalf("the request is %s, want still awaiting the customer", got)
	}
	if effects := b.ShopEffects(t, ""); len(effects) != 0 {
		t.Errorf("the shop recorded %d effects", len(effects))
	}
	// The customer, in their mailbox, still can.
	b.Clock.Advance(time.Minute)
	if page := b.Client(t).SpendMailLink(mailed); page.Doc(t).Find(`form[action="/requests/`+id+`/confirm"]`).Length() != 1 {
		t.Errorf("the customer's click after the assistant's fetch does not land on the quote:\n%s", page.Text)
	}
}

// TestAMailLinkInASignedInBrowser: the customer's own account, signed in,
// is sent to the request without spending the link (it still works
// elsewhere once); a staff account is refused, as on a confirmation link.
func TestAMailLinkInASignedInBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	path := c.MailLink(link, c.Get(link))

	jordan := b.Client(t)
	jordan.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	if res := jordan.Get(path); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
		t.Errorf("the customer's account on the mail link: %d to %q, want their request", res.StatusCode, res.Header.Get("Location"))
	}
	for _, role := range []accounts.Role{accounts.Agent, accounts.Manager} {
		staff := b.Client(t)
		staff.MustSignIn(b.Users[role])
		if res := staff.Get(path); res.StatusCode != http.StatusForbidden {
			t.Errorf("a %s's account on the mail link: %d, want 403", role, res.StatusCode)
		}
	}
	c.SpendMailLink(path)
}

// TestASpentMailLinkShowsNotTheQuoteAsItStandsNow: once spent, a mail
// link opens nothing more in another browser (a forwarded mail) even
// after its request was quoted again: it says it was used, and shows
// neither the quote the mail showed nor the one now; the browser that
// spent it is sent on to its request.
func TestASpentMailLinkShowsNotTheQuoteAsItStandsNow(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	path := c.MailLink(link, c.Get(link))
	page := c.SpendMailLink(path)

	refundAtTheShop(t, b, inv.Target.ID, 500, "goodwill, in another tab")
	confirmStale(t, c, inv.ID, page)

	forwarded := b.Client(t).Get(path)
	doc := forwarded.Doc(t)
	if forwarded.StatusCode != http.StatusGone || doc.Find(`[data-problem="spent"]`).Length() != 1 {
		t.Errorf("the spent link of a re-quoted request in another browser: %d, want 410 saying it was used\n%s", forwarded.StatusCode, forwarded.Text)
	}
	if n := doc.Find(`[data-testid="quote-now"], [data-testid="quote-was"], [data-testid="change"]`).Length(); n != 0 {
		t.Errorf("the spent link shows %d parts of the quotes to another browser", n)
	}
	if res := c.Get(path); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
		t.Errorf("the customer's own browser back on the spent link: %d to %q, want their request", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestAnOldMailLinkShowsTheRequestAsItStandsAfterTwoRequotes: quoted
// again twice, a request's first mail's link says what changed against
// the newest quote — the one awaiting the customer, whose mail is on its
// way — not against the one in between, which no longer awaits anything.
func TestAnOldMailLinkShowsTheRequestAsItStandsAfterTwoRequotes(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	old := c.MailLink(link, c.Get(link))
	page := c.Open(link)
	at := inv.ID
	for i := range 2 {
		refundAtTheShop(t, b, inv.Target.ID, 500, fmt.Sprintf("goodwill %d", i))
		at = confirmStale(t, c, at, page)
		page = c.Get("/requests/" + at)
	}
	was := b.Client(t).Get(old)
	if was.StatusCode != http.StatusConflict || was.Doc(t).Find(`[data-problem="changed"]`).Length() != 1 {
		t.Fatalf("the first mail's link after two re-quotes: %d, want 409 saying what changed\n%s", was.StatusCode, was.Text)
	}
	if got := webtest.TextByTestID(was, t, "link-problem-next"); !strings.Contains(got, "We are e-mailing you the request as it stands now") {
		t.Errorf("the first mail's link says %q, want that the newest quote is on its way", got)
	}
}

// TestAnOldMailLinkOfADecidedRequoteSaysNothingIsLeft: once the fresh
// quote that replaced a request was decided, the first mail's link says
// there is nothing left to decide, not that the request changed and was
// not mailed (which would send the customer to ask for it again).
func TestAnOldMailLinkOfADecidedRequoteSaysNothingIsLeft(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	old := c.MailLink(link, c.Get(link))
	page := c.Open(link)
	refundAtTheShop(t, b, inv.Target.ID, 500, "goodwill")
	next := confirmStale(t, c, inv.ID, page)
	page = c.Get("/requests/" + next)
	if res := c.Post("/requests/"+next+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm of the fresh quote: %d\n%s", res.StatusCode, res.Text)
	}
	was := b.Client(t).Get(old)
	if was.StatusCode != http.StatusGone || was.Doc(t).Find(`[data-problem="decided"]`).Length() != 1 {
		t.Errorf("the first mail's link once its re-quote was decided: %d, want 410 saying nothing is left to decide\n%s", was.StatusCode, was.Text)
	}
}
