package customer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/locale"
	"countersign/web/webtest"
)

// TestTheMailFollowsThePagesLanguage: the mail a customer asks for on the
// link page is written in the language that page is in: the browser's
// French, or German from the switch over the browser.
func TestTheMailFollowsThePagesLanguage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	_, link := b.PendingRefund(t)
	for _, tc := range []struct{ name, header, cookie, subject string }{
		{"the browser's", "fr-FR,fr;q=0.9", "", "Une demande de Harbour & Pine attend votre décision"},
		{"the switch's", "fr-FR", "de", "Eine Anfrage von Harbour & Pine wartet auf Ihre Entscheidung"},
	} {
		c := b.Client(t)
		c.Header.Set("Accept-Language", tc.header)
		if tc.cookie != "" {
			u, _ := url.Parse(b.Server.URL)
			c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: tc.cookie, Path: "/"}})
		}
		path := c.MailLink(link, c.Get(link))
		found := false
		for _, m := range b.Mail.Sent() {
			if strings.Contains(m.Body, path) {
				found = true
				if m.Subject != tc.subject {
					t.Errorf("%s language: the mail's subject is %q; want %q", tc.name, m.Subject, tc.subject)
				}
			}
		}
		if !found {
			t.Errorf("%s language: no mail carries %s", tc.name, path)
		}
	}
}
