package journeys_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

// TestQueueCardShowsTheWholeLongText: an edit whose new text hides a
// sentence after a long run of words is shown on the card with the
// sentence marked as added and the whole new text on the page.
func TestQueueCardShowsTheWholeLongText(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	text := strings.Repeat("Solid walnut base, linen shade, warm light. ", 5) + "Order now at evil.example/discount for 70% off."
	inv := f.Describe(t, text)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	line := c.Get("/queue/" + inv.ID).Doc(t).Find(`[data-testid="quote"] [data-testid="quote-line"]`)
	if got := line.Find(`[data-testid="line-to"]`).Text(); got != text {
		t.Errorf("the card's new text is %q, want it whole", got)
	}
	if ins := line.Find(`[data-testid="line-diff"] ins`).Text(); !strings.Contains(ins, "evil.example/discount") {
		t.Errorf("the diff does not mark the added sentence: %q", ins)
	}
}

// TestQueueBulkConfirmationShowsEachCardsLines: the bulk confirmation
// lists every selected card with its quote's lines, from and to, not only
// its title.
func TestQueueBulkConfirmationShowsEachCardsLines(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	texts := []string{"Now in oak.", "Now in walnut, with a hidden phrase at its end."}
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	var ids []string
	for _, text := range texts {
		ids = append(ids, f.Describe(t, text).ID)
	}
	form := url.Values{"_csrf": {webtest.CardForm(t, c.Get("/queue"), "bulk-form").Get("_csrf")}, "id": ids}
	res := c.Post("/queue/bulk", form)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("bulk review: %d\n%s", res.StatusCode, res.Text)
	}
	doc := res.Doc(t)
	for i, id := range ids {
		card := doc.Find(`[data-testid="bulk-card-` + id + `"]`)
		line := card.Find(`[data-testid="quote-line"]`)
		if card.Length() != 1 || line.Length() != 1 {
			t.Fatalf("card %s: %d cards with %d lines on the bulk page", id, card.Length(), line.Length())
		}
		if label := strings.TrimSpace(line.Find(`[data-testid="line-label"]`).Text()); label != "Description" {
			t.Errorf("card %s: line %q", id, label)
		}
		if from, to := line.Find(`[data-testid="line-from"]`).Text(), line.Find(`[data-testid="line-to"]`).Text(); from != "A lamp." || to != texts[i] {
			t.Errorf("card %s: %q → %q, want %q → %q", id, from, to, "A lamp.", texts[i])
		}
	}
}

// TestCustomerPageShowsEverythingSent: the customer confirming an address
// change reads the new address's second line, and a long description edit
// is a diff whose added sentence is marked, with the whole new text on the
// page; nothing is cut short.
func TestCustomerPageShowsEverythingSent(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	address := map[string]any{"name": "Jordan Lee", "line1": "77 Dock Rd", "line2": "c/o R. Mallory, Unit 9", "city": "Oakland",
		"postal_code": "94607", "country": "US"}
	inv := b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "change_shipping_address",
		map[string]any{"order_id": "standing desk mat", "address": address}, "")
	doc := b.Client(t).Open(b.Link(t, inv, webtest.Jordan)).Doc(t)
	line := doc.Find(`[data-testid="quote-line"]`)
	if from, to := line.Find(`[data-testid="line-from"]`).Text(), line.Find(`[data-testid="line-to"]`).Text(); !strings.Contains(from, "Suite 210") ||
		!strings.Contains(to, "c/o R. Mallory, Unit 9") {
		t.Errorf("the address line reads %q → %q; want both second lines", from, to)
	}

	text := strings.Repeat("Solid walnut base, linen shade, warm light. ", 5) + "Order now at evil.example/discount for 70% off."
	inv = b.ProposeFor(t, b.CustomerTask(t, webtest.Jordan), "update_product_description",
		map[string]any{"product_id": "LAMP-WAL-01", "description": text}, "")
	line = b.Client(t).Open(b.Link(t, inv, webtest.Jordan)).Doc(t).Find(`[data-testid="quote-line"]`)
	if got := line.Find(`[data-testid="line-to"]`).Text(); got != text {
		t.Errorf("the new text on the customer's page is %q, want it whole", got)
	}
	if ins := line.Find(`[data-testid="line-diff"] ins`).Text(); !strings.Contains(ins, "evil.example/discount") {
		t.Errorf("the diff does not mark the added sentence: %q", ins)
	}
}
