package customer_test

import (
	"net/http"
	"net/url"
	"testing"

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
