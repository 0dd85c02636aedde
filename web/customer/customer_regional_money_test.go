package customer_test

import (
	"testing"

	"countersign/web/webtest"
)

// TestThePagesAmountsFollowTheBrowsersRegion: a browser saying en-IE
// reads the English catalogue, and the page's own amounts as CLDR's
// Irish English writes US dollars ("US$…"); en-US keeps "$…". The
// quote's texts are the adapter's, written once in English (see
// Localizer.FormattingAs).
func TestThePagesAmountsFollowTheBrowsersRegion(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	q := stored(t, b, inv.ID).Quote
	if q.AmountCents == nil || q.Currency != "usd" && q.Currency != "USD" {
		t.Fatalf("the refund is %v %s", q.AmountCents, q.Currency)
	}
	for header, want := range map[string]string{"en-IE,en;q=0.8": "US$", "en-US": "$"} {
		c := b.Client(t)
		c.Header.Set("Accept-Language", header)
		c.Open(link)
		got := webtest.TextByTestID(c.Get("/requests"), t, "row-amount")
		if len(got) < len(want)+1 || got[:len(want)] != want || got[len(want)] < '0' || got[len(want)] > '9' {
			t.Errorf("%s: the list's amount %q, want it to start %q and a digit", header, got, want)
		}
	}
}
