package customer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/locale"
	"countersign/web/webtest"
)

// TestCustomerPagesSayTheirLanguageAndDirection: a customer's page says
// the language the request decided on the document (<html lang dir>), so
// an Arabic page is laid out right to left, and its title is the
// catalogue's (the pseudo-locale's brackets show it); the console's pages
// stay English, whatever the customer's cookie says.
func TestCustomerPagesSayTheirLanguageAndDirection(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	_, link := b.PendingRefund(t)
	for _, tc := range []struct{ cookie, lang, dir string }{
		{"ar", "ar", "rtl"},
		{"fr", "fr", "ltr"},
		{"", "en", "ltr"},
	} {
		c := b.Client(t)
		if tc.cookie != "" {
			u, _ := url.Parse(b.Server.URL)
			c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: tc.cookie, Path: "/"}})
		}
		html := c.Get(link).Doc(t).Find("html")
		if lang, _ := html.Attr("lang"); lang != tc.lang {
			t.Errorf("cookie %q: <html lang=%q>, want %q", tc.cookie, lang, tc.lang)
		}
		if dir, _ := html.Attr("dir"); dir != tc.dir {
			t.Errorf("cookie %q: <html dir=%q>, want %q", tc.cookie, dir, tc.dir)
		}
		console := c.Get("/sign-in").Doc(t).Find("html")
		if lang, _ := console.Attr("lang"); lang != "en" {
			t.Errorf("cookie %q: the console's sign-in page says lang=%q, want en", tc.cookie, lang)
		}
		if dir, ok := console.Attr("dir"); ok {
			t.Errorf("cookie %q: the console's sign-in page says dir=%q, want none (English, as before)", tc.cookie, dir)
		}
	}

	p := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithPseudoLocale())
	_, link = p.PendingRefund(t)
	doc := p.Client(t).Get(link).Doc(t)
	if lang, _ := doc.Find("html").Attr("lang"); lang != locale.Pseudo.String() {
		t.Errorf("pseudo-locale: <html lang=%q>, want %q", lang, locale.Pseudo)
	}
	if title := doc.Find("title").Text(); !strings.HasPrefix(title, "⟦") || !strings.HasSuffix(title, " · "+webtest.ShopName+"··⟧") {
		t.Errorf("pseudo-locale: title %q, want the catalogue's pattern around the page's title and the shop's name", title)
	}
}
