package customer_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"countersign/internal/confirmation"
	"countersign/internal/consent"
	"countersign/internal/locale"
	"countersign/web/webtest"
)

// TestTheDecisionRecordsTheLanguageTheCustomerRead: the customer's pages
// decide the language per request (the switch's cookie beats the
// browser's Accept-Language), and the decision's audit event records the
// language and why it was chosen.
func TestTheDecisionRecordsTheLanguageTheCustomerRead(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, cookie, header, verb, action string
		tag, from                          string
	}{
		{"the switch beats the header", "de", "fr-FR,fr;q=0.9", "confirm", "invocation.confirmed", "de", "switch"},
		{"the header when no switch", "", "es-MX, en;q=0.5", "decline", "invocation.declined", "es", "header"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
			inv, link := b.PendingRefund(t)
			c := b.Client(t)
			c.Header.Set("Accept-Language", tc.header)
			if tc.cookie != "" {
				u, _ := url.Parse(b.Server.URL)
				c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: tc.cookie, Path: "/"}})
			}
			page := c.SpendMailLink(c.MailLink(link, c.Get(link)))
			form := url.Values{"_csrf": {c.PageCSRF(page)}}
			if tc.verb == "decline" {
				form.Set("reason", "changed my mind")
			}
			if res := c.Post("/requests/"+inv.ID+"/"+tc.verb, form); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("%s: %d\n%s", tc.verb, res.StatusCode, res.Text)
			}
			events, err := b.Control.Timeline(t.Context(), inv.TaskID)
			if err != nil {
				t.Fatal(err)
			}
			var tag, from any
			for _, e := range events {
				if string(e.Action) == tc.action {
					tag, from = e.Data["locale"], e.Data["locale_from"]
				}
			}
			if tag != tc.tag || from != tc.from {
				t.Errorf("the %s records locale %v from %v; want %s from %s", tc.verb, tag, from, tc.tag, tc.from)
			}
		})
	}
}

// TestTheBusinesssWordOnTheLanguageComesFirst: a locale in the customer's
// assertion beats the switch and the header, and the decision records it
// as the business's; one the console does not ship is passed over.
func TestTheBusinesssWordOnTheLanguageComesFirst(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef-shop")
	b := webtest.New(t, webtest.WithShop(), webtest.WithProofs(map[string][]confirmation.Proof{"shop": {confirmation.ProofAssertion}}),
		webtest.WithAssertionSecrets(map[string][]byte{"shop": secret}))
	b.StageForCustomer(t, webtest.CustomerActions...)
	for i, tc := range []struct{ loc, tag, from string }{
		{"fr-CA", "fr", "business"},
		{"pt-BR", "de", "switch"},
	} {
		inv, link := b.PendingRefund(t)
		now := b.Clock.Now()
		signed := confirmation.SignAssertion(secret, confirmation.Assertion{Sub: webtest.Jordan, Sys: "shop", Link: linkSelector(link),
			IssuedAt: now.Unix(), ExpiresAt: now.Add(5 * time.Minute).Unix(), Nonce: fmt.Sprintf("n-0123456789abcdef-%d", i), Locale: tc.loc})
		c := b.Client(t)
		c.Header.Set("Accept-Language", "es")
		u, _ := url.Parse(b.Server.URL)
		c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: "de", Path: "/"}})
		if res := c.Get(link + "?assertion=" + url.QueryEscape(signed)); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: the assertion: %d\n%s", tc.loc, res.StatusCode, res.Text)
		}
		page := c.Get("/requests/" + inv.ID)
		if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: confirm: %d\n%s", tc.loc, res.StatusCode, res.Text)
		}
		var tag, from string
		if err := b.Store.Pool().QueryRow(t.Context(), `SELECT data->>'locale', data->>'locale_from' FROM events
			WHERE invocation_id = $1 AND action = 'invocation.confirmed'`, inv.ID).Scan(&tag, &from); err != nil {
			t.Fatal(err)
		}
		if tag != tc.tag || from != tc.from {
			t.Errorf("an assertion with loc %q: the confirmation records %s from %s; want %s from %s", tc.loc, tag, from, tc.tag, tc.from)
		}
	}
}

// TestAPasskeyDecisionRecordsTheLanguageItsPageWasReadIn: a passkey
// decides on the link's page, before any other proof; its audit records
// the language that page was read in (here the browser's German, the
// record having none when the page was shown), not the one the customer
// record names by the time the passkey's proof starts a session.
func TestAPasskeyDecisionRecordsTheLanguageItsPageWasReadIn(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	pk, origin := passkeyCustomers(t, b)
	first, _ := b.PendingRefund(t)
	account := pk.Client(t)
	account.MustSignIn(b.CustomerAccount(t, webtest.Jordan))
	if res := account.Post("/requests/"+first.ID+"/decline", url.Values{"_csrf": {account.PageCSRF(account.Get("/requests/" + first.ID))}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline with the account: %d", res.StatusCode)
	}
	k, status, _ := addCustomerPasskey(t, account, first.ID, origin)
	if status != http.StatusOK {
		t.Fatalf("adding the passkey: %d", status)
	}
	inv, link := b.PendingRefund(t)
	c := pk.Client(t)
	c.Header.Set("Accept-Language", "de")
	if got := pageLanguage(t, c.Get(link)); got != "de" {
		t.Fatalf("the link's page is in %q, want the browser's de", got)
	}
	if err := b.Shop.SetCustomerLocale(t.Context(), webtest.Jordan, "ar"); err != nil {
		t.Fatal(err)
	}
	if status, r := decideWithPasskey(t, c, link, consent.Confirm, k, origin); status != http.StatusOK {
		t.Fatalf("confirm with the passkey: %d %+v", status, r)
	}
	if tag, from := decidedLanguage(t, b, inv.ID); tag != "de" || from != "header" {
		t.Errorf("the passkey's confirmation records %s from %s; want de from header, as its page was read", tag, from)
	}
}
