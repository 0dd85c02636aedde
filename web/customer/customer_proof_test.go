package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/internal/accounts"
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
	b := setup(t, withShop(), withAssistant())
	b.stageForCustomer(t, "change_shipping_address")
	order := ""
	orders := b.call(t, b.key, http.MethodPost, "/api/v1/tools/list_orders", map[string]any{"task": b.taskID(), "args": map[string]any{}}).want(t, http.StatusOK)
	for _, o := range orders.json["data"].([]any) {
		if m := o.(map[string]any); strings.Contains(m["display"].(string), "mat") {
			order = m["order_id"].(string)
		}
	}
	res := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+b.taskID()+"/invocations", map[string]any{"action": "change_shipping_address",
		"args": map[string]any{"order_id": order, "address": jordanAddress}}).want(t, http.StatusCreated)
	id := res.json["id"].(string)
	next := res.json["next"].(map[string]any)
	link := strings.TrimPrefix(next["url"].(string), b.srv.URL)
	if next["kind"] != "confirm" || !strings.HasPrefix(link, "/c/") {
		t.Fatalf("next = %v, want a confirmation link", next)
	}

	attacker := b.client(t)
	page := attacker.get(link)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("the link page: %d", page.StatusCode)
	}
	if n := page.doc(t).Find(`form[action$="/confirm"]`).Length(); n != 0 {
		t.Errorf("the link page has %d confirm forms before any proof", n)
	}
	tok, _ := page.doc(t).Find(`input[name="_csrf"]`).First().Attr("value")
	for _, path := range []string{"/requests/" + id + "/confirm", "/requests/" + id + "/decline"} {
		if res := attacker.post(path, url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST %s with the link's session: %d, want 401", path, res.StatusCode)
		}
	}
	// It may make the console send the customer a code, but the code goes to
	// the contact on file, and guessing is bounded.
	attacker.sendCode(link, page)
	for i := 0; i < confirmation.DefaultCodeLimits.MissesPerHour; i++ {
		if res := attacker.tryCode(link, fmt.Sprintf("%06d", i)); res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("guess %d: %d, want 422", i, res.StatusCode)
		}
	}
	if res := attacker.tryCode(link, "999999"); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a guess past the customer's bound: %d, want 429", res.StatusCode)
	}
	if res := attacker.get("/requests/" + id); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the request page after guessing: %d, want 401", res.StatusCode)
	}
	if got := b.inv(t, id).State; got != controlplane.AwaitingConfirmation {
		t.Fatalf("the invocation is %s, want still awaiting the customer", got)
	}
	if effects := b.shopEffects(t, ""); len(effects) != 0 {
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
	b := setup(t, withShop(), withCustomerStage())
	_, link := b.pendingRefund(t)
	_, other := b.pendingRefund(t)
	c := b.client(t)
	first := c.sendCode(link, c.get(link))
	if got := b.mail.Sent()[len(b.mail.Sent())-1].To; !strings.EqualFold(got, jordan) {
		t.Errorf("the code went to %q, want the shop's address on file %q", got, jordan)
	}
	// Someone else holding the link (the assistant) asks for another code.
	asst := b.client(t)
	asst.sendCode(link, asst.get(link))
	for i := 2; i < confirmation.DefaultCodeLimits.MailsPer15Min; i++ {
		asst.sendCode(other, asst.get(other))
	}
	tok, _ := c.get(other).doc(t).Find(`[data-testid="send-code-form"] input[name="_csrf"]`).Attr("value")
	res := c.post(other+"/code", url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(text(res, t, "prove-problem"), "We sent you a code at") {
		t.Errorf("code %d to the customer within 15 minutes, on another link: %d, want 429 saying when the last went\n%s",
			confirmation.DefaultCodeLimits.MailsPer15Min+1, res.StatusCode, res.body)
	}
	// The customer's first code still works: later codes did not retire it.
	c.prove(link, first)
	b.clock.Advance(61 * time.Minute)
	// The request itself expired by now (30-minute window): the link says so.
	if res := b.client(t).get(link); res.StatusCode != http.StatusGone {
		t.Errorf("the link after its deadline: %d, want 410", res.StatusCode)
	}
}

// TestOpeningALinkSpendsNothing fetches a link as mail scanners and link
// previews do, several times, and the customer can still prove and
// confirm afterwards; the API returns one live link however often it is
// read.
func TestOpeningALinkSpendsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withCustomerStage())
	inv, link := b.pendingRefund(t)
	for i := 0; i < 3; i++ {
		if res := b.client(t).get(link); res.StatusCode != http.StatusOK {
			t.Fatalf("fetch %d: %d", i, res.StatusCode)
		}
	}
	for i := 0; i < 3; i++ {
		if again := b.link(t, inv, jordan); again != link {
			t.Fatalf("read %d made another link %q, want the live one %q", i, again, link)
		}
	}
	var live int
	if err := b.store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM confirmation_links WHERE invocation_id = $1 AND revoked_at IS NULL`, inv.ID).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if live != 1 {
		t.Errorf("%d live links, want 1", live)
	}
	c := b.client(t)
	res := c.open(link)
	if res := c.post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.pageCSRF(res)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d", res.StatusCode)
	}
	if got := b.inv(t, inv.ID).State; got != controlplane.Approved {
		t.Errorf("after the customer's confirmation: %s, want approved", got)
	}
	// Ended links are cleaned up a day after they end.
	b.clock.Advance(25*time.Hour + 31*time.Minute)
	if n, err := b.links.SweepLinks(context.Background()); err != nil || n < 1 {
		t.Errorf("sweep removed %d links (%v), want the expired one", n, err)
	}
}

// TestAnotherCustomersLinkDoesNotSwitchTheBrowser opens customer B's link
// in a browser that proved it is customer A: the page shows B's request
// and asks for B's proof; A's session is untouched and B's request stays
// closed to it until B's code is entered.
func TestAnotherCustomersLinkDoesNotSwitchTheBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withCustomerStage())
	mine, myLink := b.pendingRefund(t)
	hannah := "hannah.weiss@example.de"
	theirs := b.proposeFor(t, b.customerTask(t, hannah), "reinstate_subscription", map[string]any{"subscription_id": "my Pro plan"}, "")
	theirLink := b.link(t, theirs, hannah)

	c := b.client(t)
	c.open(myLink)
	page := c.get(theirLink)
	if page.StatusCode != http.StatusOK || page.doc(t).Find(`[data-testid="other-customer"]`).Length() != 1 {
		t.Fatalf("B's link in A's browser: %d without the notice\n%s", page.StatusCode, page.body)
	}
	if res := c.get("/requests/" + theirs.ID); res.StatusCode != http.StatusNotFound {
		t.Errorf("B's request with A's session: %d, want 404", res.StatusCode)
	}
	if res := c.get("/requests/" + mine.ID); res.StatusCode != http.StatusOK {
		t.Errorf("A's own request after opening B's link: %d, want 200", res.StatusCode)
	}
	// B's link was not used up: B opens it in their own browser.
	b.client(t).open(theirLink)
}

// TestSignedInCustomerAccountIsProof opens a link as a signed-in customer
// account of the link's customer: no code needed.
func TestSignedInCustomerAccountIsProof(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withCustomerStage())
	inv, link := b.pendingRefund(t)
	u := b.customerAccount(t, jordan)
	c := b.client(t)
	if res := c.get(link); res.doc(t).Find(`[data-testid="sign-in-option"] a[href^="/sign-in?next="]`).Length() != 1 {
		t.Fatalf("the link page offers no sign-in\n%s", res.body)
	}
	c.mustSignIn(u)
	res := c.get(link)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
		t.Fatalf("the link as the signed-in customer: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	page := c.get("/requests/" + inv.ID)
	if res := c.post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.pageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d", res.StatusCode)
	}
	var proof string
	if err := b.store.Pool().QueryRow(context.Background(), `SELECT data->>'proof' FROM events
		WHERE invocation_id = $1 AND action = 'invocation.confirmed'`, inv.ID).Scan(&proof); err != nil || proof != "account" {
		t.Errorf("the confirmation's event records proof %q (%v), want account", proof, err)
	}
}

// TestCustomerAssertion proves the customer with an assertion signed by the
// business's site, and refuses every assertion that is not exactly that.
func TestCustomerAssertion(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef-shop")
	b := setup(t, withShop(), withProofs(map[string][]confirmation.Proof{"shop": {confirmation.ProofAssertion}}), withAssertionSecrets(map[string][]byte{"shop": secret}))
	b.stageForCustomer(t, customerActions...)
	inv, link := b.pendingRefund(t)
	_, other := b.pendingRefund(t) // another request of the same customer
	now := b.clock.Now()
	good := confirmation.Assertion{Sub: jordan, Sys: "shop", Link: linkSelector(link), IssuedAt: now.Unix(),
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
		if res := b.client(t).get(link + "?assertion=" + url.QueryEscape(signed)); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, res.StatusCode)
		}
	}
	// Codes are not accepted for this system.
	c := b.client(t)
	if res := c.get(link); res.doc(t).Find(`[data-testid="send-code-form"]`).Length() != 0 {
		t.Error("the page offers a code where only assertions are accepted")
	}
	signed := confirmation.SignAssertion(secret, good)
	res := c.get(link + "?assertion=" + url.QueryEscape(signed))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/requests/"+inv.ID {
		t.Fatalf("a good assertion: %d to %q\n%s", res.StatusCode, res.Header.Get("Location"), res.body)
	}
	if res := c.get("/requests/" + inv.ID); res.StatusCode != http.StatusOK {
		t.Errorf("the request after the assertion: %d", res.StatusCode)
	}
	if res := b.client(t).get(link + "?assertion=" + url.QueryEscape(signed)); res.StatusCode != http.StatusForbidden {
		t.Errorf("the same assertion again: %d, want 403", res.StatusCode)
	}
}

// linkSelector is the public half of a link path (/c/<selector>.<verifier>),
// which a customer assertion names.
func linkSelector(link string) string {
	selector, _, _ := strings.Cut(strings.TrimPrefix(link[strings.Index(link, "/c/"):], "/c/"), ".")
	return selector
}

// customerAccount makes a console account for the customer whose e-mail is
// ref.
func (b *testBundle) customerAccount(t *testing.T, ref string) testUser {
	t.Helper()
	const pw = "correct horse customer"
	u, err := b.accounts.Create(context.Background(), accounts.NewUser{Email: ref, Name: "Customer", Role: accounts.Customer, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	return testUser{User: u, Password: pw}
}
