package customer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/locale"
	"countersign/web/webtest"
)

// TestTheDoneHeadlineAndOrderReferenceReadInFrenchAndArabic: once a
// refund is carried out, a customer reading French or Arabic is told it
// in their language (the quote's done words, from the shop's catalogue)
// and sees the order's reference as their language writes it; English
// stays the spec's.
func TestTheDoneHeadlineAndOrderReferenceReadInFrenchAndArabic(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, c := completedRefund(t, b)
	number := inv.Quote.Customer.Reference[strings.LastIndex(inv.Quote.Customer.Reference, "#"):]
	u, _ := url.Parse(b.Server.URL)
	for _, tc := range []struct{ tag, headline, reference string }{
		{"en", "Refunded.", "Order " + number},
		{"fr", "Le remboursement est effectué.", "Commande " + number},
		{"ar", "تم استرداد المبلغ.", "الطلب " + number},
	} {
		c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: tc.tag, Path: "/"}})
		page := c.Get("/requests/" + inv.ID)
		// The headline goes on with the result's reference (the shop's
		// own, "#…"), which this test does not hold.
		if got := webtest.TextByTestID(page, t, "status-headline"); !strings.HasPrefix(got, tc.headline+" ") {
			t.Errorf("%s: headline %q, want it to start %q", tc.tag, got, tc.headline)
		}
		if got := webtest.TextByTestID(page, t, "object-reference"); got != tc.reference {
			t.Errorf("%s: order reference %q, want %q", tc.tag, got, tc.reference)
		}
	}
}
