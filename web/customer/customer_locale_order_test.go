package customer_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"countersign/internal/confirmation"
	"countersign/internal/locale"
	"countersign/web/webtest"
)

// pageLanguage is the language a customer's page says it is in: the
// switch's current entry.
func pageLanguage(t *testing.T, res webtest.Response) string {
	t.Helper()
	lang, _ := res.Doc(t).Find(`[data-testid="language-switch"] [aria-current="true"]`).Attr("lang")
	return lang
}

// decidedLanguage is the language and its source the confirmation of
// invocation id recorded in its audit event.
func decidedLanguage(t *testing.T, b *webtest.Stack, id string) (tag, from string) {
	t.Helper()
	if err := b.Store.Pool().QueryRow(t.Context(), `SELECT data->>'locale', data->>'locale_from' FROM events
		WHERE invocation_id = $1 AND action = 'invocation.confirmed'`, id).Scan(&tag, &from); err != nil {
		t.Fatal(err)
	}
	return tag, from
}

// TestTheLanguageFollowsTheOrderOnRealPages: on the request's page and in
// its decision's audit event, the customer's language is the first of the
// assertion's loc, the customer record's locale (read through the shop
// adapter), the switch's cookie, Accept-Language, the system's default
// (the shop's brand) and English that names a shipped language. Each case
// takes the one above away.
func TestTheLanguageFollowsTheOrderOnRealPages(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef-shop")
	proofs := webtest.WithProofs(map[string][]confirmation.Proof{"shop": {confirmation.ProofAssertion, confirmation.ProofLink}})
	secrets := webtest.WithAssertionSecrets(map[string][]byte{"shop": secret})
	withDefault := webtest.New(t, webtest.WithShop(), webtest.WithShopLocale("es"), proofs, secrets)
	withDefault.StageForCustomer(t, webtest.CustomerActions...)
	noDefault := webtest.New(t, webtest.WithShop(), proofs, secrets)
	noDefault.StageForCustomer(t, webtest.CustomerActions...)
	cases := []struct {
		name                     string
		b                        *webtest.Stack
		loc, record, cookie, hdr string
		tag, from                string
	}{
		{"the assertion's word first", withDefault, "fr-CA", "ar", "de", "en-GB", "fr", "business"},
		{"then the customer record", withDefault, "", "ar", "de", "en-GB", "ar", "business"},
		{"an assertion's language the pages lack passes to the record", withDefault, "pt-BR", "ar", "de", "en-GB", "ar", "business"},
		{"then the switch", withDefault, "", "", "de", "en-GB", "de", "switch"},
		{"then the header", withDefault, "", "", "", "en-GB", "en", "header"},
		{"then the system's default", withDefault, "", "", "", "pt-BR", "es", "default"},
		{"then English", noDefault, "", "", "", "pt-BR", "en", "fallback"},
	}
	// One stack's shop takes one request of each kind (a second refund of
	// the lamp would go to staff).
	proposals := []struct {
		action string
		args   map[string]any
	}{
		{"issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}},
		{"reinstate_subscription", map[string]any{"subscription_id": "Photo add-on plan for acme.example"}},
		{"resend_receipt", map[string]any{"invoice_id": "paid Pro invoice"}},
		{"change_shipping_address", map[string]any{"order_id": "standing desk mat", "address": webtest.JordanAddress}},
		{"cancel_subscription", map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"}},
		{"cancel_subscription", map[string]any{"subscription_id": "Starter plan for acme.shop", "reason_code": "too_expensive", "effective": "end_of_period"}},
		{"issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}},
	}
	for i, tc := range cases {
		b := tc.b
		if err := b.Shop.SetCustomerLocale(t.Context(), webtest.Jordan, tc.record); err != nil {
			t.Fatal(err)
		}
		p := proposals[i]
		inv := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), p.action, p.args, "")
		link := b.Link(t, inv, webtest.Jordan)
		c := b.Client(t)
		if tc.hdr != "" {
			c.Header.Set("Accept-Language", tc.hdr)
		}
		if tc.cookie != "" {
			u, _ := url.Parse(b.Server.URL)
			c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: tc.cookie, Path: "/"}})
		}
		var page webtest.Response
		if tc.loc != "" {
			now := b.Clock.Now()
			signed := confirmation.SignAssertion(secret, confirmation.Assertion{Sub: webtest.Jordan, Sys: "shop", Link: linkSelector(link),
				IssuedAt: now.Unix(), ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: fmt.Sprintf("n-0123456789abcdef-order-%d", i), Locale: tc.loc})
			if res := c.Get(link + "?assertion=" + url.QueryEscape(signed)); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("%s: the assertion: %d\n%s", tc.name, res.StatusCode, res.Text)
			}
			page = c.Get("/requests/" + inv.ID)
		} else {
			page = c.Open(link)
		}
		if got := pageLanguage(t, page); got != tc.tag {
			t.Errorf("%s: the request's page is in %q, want %q", tc.name, got, tc.tag)
		}
		if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: confirm: %d\n%s", tc.name, res.StatusCode, res.Text)
		}
		if tag, from := decidedLanguage(t, b, inv.ID); tag != tc.tag || from != tc.from {
			t.Errorf("%s: the confirmation records %s from %s; want %s from %s", tc.name, tag, from, tc.tag, tc.from)
		}
	}
}

// TestTheCustomerRecordIsReadOncePerSession: the record's locale is read
// when the customer's proof is made and kept in the session, so a change
// in the shop shows from the customer's next session, not on every page
// at the cost of a round-trip; a signed-in account reads it the first
// time a page of the system needs it, and its decision records it.
func TestTheCustomerRecordIsReadOncePerSession(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	if err := b.Shop.SetCustomerLocale(t.Context(), webtest.Jordan, "ar"); err != nil {
		t.Fatal(err)
	}
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	if got := pageLanguage(t, c.Open(link)); got != "ar" {
		t.Fatalf("the page after the proof is in %q, want the record's ar", got)
	}
	if err := b.Shop.SetCustomerLocale(t.Context(), webtest.Jordan, "de"); err != nil {
		t.Fatal(err)
	}
	if got := pageLanguage(t, c.Get("/requests/"+inv.ID)); got != "ar" {
		t.Errorf("the same session's next page is in %q, want ar as read at the proof", got)
	}
	if got := pageLanguage(t, b.Client(t).Open(link)); got != "de" {
		t.Errorf("a new session's page is in %q, want the record's de now", got)
	}

	account := b.Client(t)
	account.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	page := account.Get("/requests/" + inv.ID)
	if got := pageLanguage(t, page); got != "de" {
		t.Errorf("a signed-in customer's page is in %q, want the record's de", got)
	}
	if res := account.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {account.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
	}
	if tag, from := decidedLanguage(t, b, inv.ID); tag != "de" || from != "business" {
		t.Errorf("the account's confirmation records %s from %s; want de from business", tag, from)
	}
}

// TestALinksPageSpeaksItsCustomersLanguageBeforeAnyProof: the page a
// customer's link opens, before its holder proves anything, is in the
// language of the link's customer as the business keeps it (their record),
// ahead of the browser's; it shows that customer's request to whoever
// holds the link anyway. The record is read once per customer a while
// (linkLocaleFor), in any browser, and again at the proof.
func TestALinksPageSpeaksItsCustomersLanguageBeforeAnyProof(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	b.StageForCustomer(t, webtest.CustomerActions...)
	if err := b.Shop.SetCustomerLocale(t.Context(), webtest.Jordan, "ar"); err != nil {
		t.Fatal(err)
	}
	inv := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}, "")
	c := b.Client(t)
	c.Header.Set("Accept-Language", "de")
	page := c.Get(b.Link(t, inv, webtest.Jordan))
	if page.StatusCode != http.StatusOK {
		t.Fatalf("the link's page: %d\n%s", page.StatusCode, page.Text)
	}
	if got := pageLanguage(t, page); got != "ar" {
		t.Errorf("the link's page before any proof is in %q, want the record's ar", got)
	}
	if err := b.Shop.SetCustomerLocale(t.Context(), webtest.Jordan, ""); err != nil {
		t.Fatal(err)
	}
	again := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "change_shipping_address",
		map[string]any{"order_id": "standing desk mat", "address": webtest.JordanAddress}, "")
	if got := pageLanguage(t, c.Get(b.Link(t, again, webtest.Jordan))); got != "ar" {
		t.Errorf("the same customer's next link in the same browser is in %q, want ar as read at the first", got)
	}
}

// TestALinksPageFetchedAgainAndAgainCostsTheShopOneRead: whoever holds a
// link (an assistant relaying it, a mail scanner) may fetch its page
// without cookies as often as they like; the page still speaks the
// record's language, but the customer record is read from the shop once,
// not once per fetch, and no fetch stores a session, as the sign-in page
// stores none (TestCookielessVisitsStoreNoSession).
func TestALinksPageFetchedAgainAndAgainCostsTheShopOneRead(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	b.StageForCustomer(t, webtest.CustomerActions...)
	if err := b.Shop.SetCustomerLocale(t.Context(), webtest.Jordan, "ar"); err != nil {
		t.Fatal(err)
	}
	inv := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "issue_refund",
		map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}, "")
	link := b.Link(t, inv, webtest.Jordan)
	shopCalls := func() int {
		b.ShopHeaders.Mu.Lock()
		defer b.ShopHeaders.Mu.Unlock()
		return len(b.ShopHeaders.Got)
	}
	sessions := func() (n int) {
		if err := b.Store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := b.Client(t).Get(link)
	if got := pageLanguage(t, first); got != "ar" {
		t.Fatalf("the link's page is in %q, want the record's ar", got)
	}
	calls, rows := shopCalls(), sessions()
	for range 10 {
		page := b.Client(t).Get(link)
		if got := pageLanguage(t, page); got != "ar" {
			t.Fatalf("a cookieless fetch of the link's page is in %q, want the record's ar", got)
		}
	}
	if got := shopCalls() - calls; got != 0 {
		t.Errorf("10 more cookieless fetches of the link's page called the shop %d times; want 0", got)
	}
	if got := sessions(); got != rows {
		t.Errorf("sessions: %d after 10 cookieless fetches of the link's page, want %d", got, rows)
	}
}
