package customer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
)

// TestAssistantCannotConfirmWithTheLink plays the assistant (or its model
// with an HTTP tool): it proposes a stage-4 address change through the API,
// opens the next.url it was given with a plain HTTP client, scrapes every
// form and token the page has, and tries to confirm. Nothing it holds is
// the customer's proof, so the request stays awaiting the customer and
// nothing reaches the shop.
func TestAssistantCannotConfirmWithTheLink(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant(), webtest.WithTypedCodes())
	b.StageForCustomer(t, "change_shipping_address")
	order := ""
	orders := b.Call(t, b.Key, http.MethodPost, "/api/v1/tools/list_orders", map[string]any{"task": b.TaskID(), "args": map[string]any{}}).Want(t, http.StatusOK)
	for _, o := range orders.JSON["data"].([]any) {
		if m := o.(map[string]any); strings.Contains(m["display"].(string), "mat") {
			order = m["order_id"].(string)
		}
	}
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"action": "change_shipping_address",
		"args": map[string]any{"order_id": order, "address": webtest.JordanAddress}}).Want(t, http.StatusCreated)
	id := res.JSON["id"].(string)
	next := res.JSON["next"].(map[string]any)
	link := strings.TrimPrefix(next["url"].(string), b.Server.URL)
	if next["kind"] != "confirm" || !strings.HasPrefix(link, "/c/") {
		t.Fatalf("next = %v, want a confirmation link", next)
	}

	attacker := b.Client(t)
	page := attacker.Get(link)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("the link page: %d", page.StatusCode)
	}
	if n := page.Doc(t).Find(`form[action$="/confirm"]`).Length(); n != 0 {
		t.Errorf("the link page has %d confirm forms before any proof", n)
	}
	tok, _ := page.Doc(t).Find(`input[name="_csrf"]`).First().Attr("value")
	for _, path := range []string{"/requests/" + id + "/confirm", "/requests/" + id + "/decline"} {
		if res := attacker.Post(path, url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST %s with the link's session: %d, want 401", path, res.StatusCode)
		}
	}
	// It may make the console send the customer a code, but the code goes to
	// the contact on file, and guessing is bounded.
	attacker.SendCode(link, page)
	for i := 0; i < confirmation.DefaultCodeLimits.MissesPerHour; i++ {
		if res := attacker.TryCode(link, fmt.Sprintf("%06d", i)); res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("guess %d: %d, want 422", i, res.StatusCode)
		}
	}
	if res := attacker.TryCode(link, "999999"); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a guess past the customer's bound: %d, want 429", res.StatusCode)
	}
	if res := attacker.Get("/requests/" + id); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the request page after guessing: %d, want 401", res.StatusCode)
	}
	if got := b.Invocation(t, id).State; got != controlplane.AwaitingConfirmation {
		t.Fatalf("the invocation is %s, want still awaiting the customer", got)
	}
	if effects := b.ShopEffects(t, ""); len(effects) != 0 {
		t.Errorf("the shop recorded %d effects: %+v", len(effects), effects)
	}
}

// TestCodeGoesToTheContactOnFileAndIsBounded checks where codes go and the
// mail limits: a new code leaves the customer's earlier live code working
// (whoever holds the link can ask for codes but not retire the customer's),
// and the customer gets at most MailsPer15Min codes in 15 minutes across
// all their links, told when the last one went.
func TestCodeGoesToTheContactOnFileAndIsBounded(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes())
	_, link := b.PendingRefund(t)
	_, other := b.PendingRefund(t)
	c := b.Client(t)
	first := c.SendCode(link, c.Get(link))
	if got := b.Mail.Sent()[len(b.Mail.Sent())-1].To; !strings.EqualFold(got, webtest.Jordan) {
		t.Errorf("the code went to %q, want the shop's address on file %q", got, webtest.Jordan)
	}
	// Someone else holding the link (the assistant) asks for another code.
	asst := b.Client(t)
	asst.SendCode(link, asst.Get(link))
	for i := 2; i < confirmation.DefaultCodeLimits.MailsPer15Min; i++ {
		asst.SendCode(other, asst.Get(other))
	}
	tok, _ := c.Get(other).Doc(t).Find(`[data-testid="send-code-form"] input[name="_csrf"]`).Attr("value")
	res := c.Post(other+"/code", url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(webtest.TextByTestID(res, t, "prove-problem"), "We sent you a code at") {
		t.Errorf("code %d to the customer within 15 minutes, on another link: %d, want 429 saying when the last went\n%s",
			confirmation.DefaultCodeLimits.MailsPer15Min+1, res.StatusCode, res.Text)
	}
	// The customer's first code still works: later codes did not retire it.
	c.Prove(link, first)
	b.Clock.Advance(61 * time.Minute)
	// The request itself expired by now (30-minute window): the link says so.
	if res := b.Client(t).Get(link); res.StatusCode != http.StatusGone {
		t.Errorf("the link after its deadline: %d, want 410", res.StatusCode)
	}
}

// TestOpeningALinkSpendsNothing fetches a link as mail scanners and link
// previews do, several times, and the customer can still prove and
// confirm afterwards; the API returns one live link however often it is
// read.
func TestOpeningALinkSpendsNothing(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	for i := 0; i < 3; i++ {
		if res := b.Client(t).Get(link); res.StatusCode != http.StatusOK {
			t.Fatalf("fetch %d: %d", i, res.StatusCode)
		}
	}
	for i := 0; i < 3; i++ {
		if again := b.Link(t, inv, webtest.Jordan); again != link {
			t.Fatalf("read %d made another link %q, want the live one %q", i, again, link)
		}
	}
	var live int
	if err := b.Store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM confirmation_links WHERE invocation_id = $1 AND revoked_at IS NULL`, inv.ID).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if live != 1 {
		t.Errorf("%d live links, want 1", live)
	}
	c := b.Client(t)
	res := c.Open(link)
	if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(res)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d", res.StatusCode)
	}
	if got := b.Invocation(t, inv.ID).State; got != controlplane.Approved {
		t.Errorf("after the customer's confirmation: %s, want approved", got)
	}
	// Ended links are cleaned up a day after they end.
	b.Clock.Advance(25*time.Hour + 31*time.Minute)
	if n, err := b.Links.SweepLinks(context.Background()); err != nil || n < 1 {
		t.Errorf("sweep removed %d links (%v), want the expired one", n, err)
	}
}

// TestAnotherCustomersLinkDoesNotSwitchTheBrowser opens customer B's link
// in a browser that proved it is customer A: the page shows B's request
// and asks for B's proof; A's session is untouched and B's request stays
// closed to it until B's code is entered.
func TestAnotherCustomersLinkDoesNotSwitchTheBrowser(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	mine, myLink := b.PendingRefund(t)
	hannah := "hannah.weiss@example.de"
	theirs := b.ProposeFor(t, b.CustomerTask(t, hannah), "reinstate_subscription", map[string]any{"subscription_id": "my Pro plan"}, "")
	theirLink := b.Link(t, theirs, hannah)

	c := b.Client(t)
	c.Open(myLink)
	page := c.Get(theirLink)
	if page.StatusCode != http.StatusOK || page.Doc(t).Find(`[data-testid="other-customer"]`).Length() != 1 {
		t.Fatalf("B's link in A's browser: %d without the notice\n%s", page.StatusCode, page.Text)
	}
	if res := c.Get("/requests/" + theirs.ID); res.StatusCode != http.StatusNotFound {
		t.Errorf("B's request with A's session: %d, want 404", res.StatusCode)
	}
	if res := c.Get("/requests/" + mine.ID); res.StatusCode != http.StatusOK {
		t.Errorf("A's own request after opening B's link: %d, want 200", res.StatusCode)
	}
	// B's link was not used up: B opens it in their own browser.
	b.Client(t).Open(theirLink)
}

// TestSignedInCustomerAccountIsProof opens a link as a signed-in customer
// account of the link's customer: no code needed.
func TestSignedInCustomerAccountIsProof(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	u := b.CustomerAccount(t, webtest.Jordan)
	c := b.Client(t)
	if res := c.Get(link); res.Doc(t).Find(`[data-testid="sign-in-option"] a[href^="/sign-in?next="]`).Length() != 1 {
		t.Fatalf("the link page offers no sign-in\n%s", res.Text)
	}
	c.MustSignIn(u)
	res := c.Get(link)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
		t.Fatalf("the link as the signed-in customer: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	page := c.Get("/requests/" + inv.ID)
	if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d", res.StatusCode)
	}
	var proof string
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT data->>'proof' FROM events
		WHERE invocation_id = $1 AND action = 'invocation.confirmed'`, inv.ID).Scan(&proof); err != nil || proof != "account" {
		t.Errorf("the confirmation's event records proof %q (%v), want account", proof, err)
	}
}

// TestCustomerAssertion proves the customer with an assertion signed by the
// business's site, and refuses every assertion that is not exactly that.
func TestCustomerAssertion(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef-shop")
	b := webtest.New(t, webtest.WithShop(), webtest.WithProofs(map[string][]confirmation.Proof{"shop": {confirmation.ProofAssertion}}), webtest.WithAssertionSecrets(map[string][]byte{"shop": secret}))
	b.StageForCustomer(t, webtest.CustomerActions...)
	inv, link := b.PendingRefund(t)
	_, other := b.PendingRefund(t) // another request of the same customer
	now := b.Clock.Now()
	good := confirmation.Assertion{Sub: webtest.Jordan, Sys: "shop", Link: linkSelector(link), IssuedAt: now.Unix(),
		ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: "n-0123456789abcdef"}
	with := func(f func(*confirmation.Assertion)) confirmation.Assertion {
		a := good
		a.Nonce += fmt.Sprint(time.Now().UnixNano())
		f(&a)
		return a
	}
	refused := map[string]string{
		"wrong secret":     confirmation.SignAssertion([]byte("not the shop's secret, not at all"), good),
		"another customer": confirmation.SignAssertion(secret, with(func(a *confirmation.Assertion) { a.Sub = "hannah.weiss@example.de" })),
		"another system":   confirmation.SignAssertion(secret, with(func(a *confirmation.Assertion) { a.Sys = "shop-eu" })),
		"expired":          confirmation.SignAssertion(secret, with(func(a *confirmation.Assertion) { a.ExpiresAt = now.Add(-time.Second).Unix() })),
		"too long-lived":   confirmation.SignAssertion(secret, with(func(a *confirmation.Assertion) { a.ExpiresAt = now.Add(time.Hour).Unix() })),
		"short nonce":      confirmation.SignAssertion(secret, with(func(a *confirmation.Assertion) { a.Nonce = "1" })),
		"no link":          confirmation.SignAssertion(secret, with(func(a *confirmation.Assertion) { a.Link = "" })),
		"another link":     confirmation.SignAssertion(secret, with(func(a *confirmation.Assertion) { a.Link = linkSelector(other) })),
		"garbage":          "not-an-assertion",
	}
	for name, signed := range refused {
		if res := b.Client(t).Get(link + "?assertion=" + url.QueryEscape(signed)); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, res.StatusCode)
		}
	}
	// Codes are not accepted for this system.
	c := b.Client(t)
	if res := c.Get(link); res.Doc(t).Find(`[data-testid="send-code-form"]`).Length() != 0 {
		t.Error("the page offers a code where only assertions are accepted")
	}
	signed := confirmation.SignAssertion(secret, good)
	res := c.Get(link + "?assertion=" + url.QueryEscape(signed))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
		t.Fatalf("a good assertion: %d to %q\n%s", res.StatusCode, res.Header.Get("Location"), res.Text)
	}
	if res := c.Get("/requests/" + inv.ID); res.StatusCode != http.StatusOK {
		t.Errorf("the request after the assertion: %d", res.StatusCode)
	}
	if res := b.Client(t).Get(link + "?assertion=" + url.QueryEscape(signed)); res.StatusCode != http.StatusForbidden {
		t.Errorf("the same assertion again: %d, want 403", res.StatusCode)
	}
}

// linkSelector is the public half of a link path (/c/<selector>.<verifier>),
// which a customer assertion names.
func linkSelector(link string) string {
	selector, _, _ := strings.Cut(strings.TrimPrefix(link[strings.Index(link, "/c/"):], "/c/"), ".")
	return selector
}
