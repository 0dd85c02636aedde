package customer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"countersign/internal/adapter"
	"countersign/web/webtest"
)

// englishOnly takes request id's stored quote's translations away, as a
// system that writes its quotes in one language would store it.
func englishOnly(t *testing.T, b *webtest.Stack, id string) {
	t.Helper()
	var raw []byte
	if err := b.Store.Pool().QueryRow(t.Context(), `SELECT quote FROM invocations WHERE id = $1`, id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var q adapter.Quote
	if err := json.Unmarshal(raw, &q); err != nil {
		t.Fatal(err)
	}
	q.Translations = nil
	out, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Pool().Exec(t.Context(), `UPDATE invocations SET quote = $2 WHERE id = $1`, id, out); err != nil {
		t.Fatal(err)
	}
}

// TestTheReceiptNamesTheLanguageOfTheWordsRead: a request whose quote
// has no French words, decided on a page in French, was read in English:
// its receipt says so and marks the English title as English, rather
// than naming the page's language the customer never read it in.
func TestTheReceiptNamesTheLanguageOfTheWordsRead(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	englishOnly(t, b, inv.ID)
	c := b.Client(t)
	withLanguage(c, "fr")
	page := c.Open(link)
	if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(page)}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
	}
	if _, err := b.Control.Dispatch(context.Background(), inv.ID); err != nil {
		t.Fatal(err)
	}
	receipt := c.Get("/requests/" + inv.ID).Doc(t).Find(`[data-testid="receipt"]`)
	if got, want := webtest.Squash(receipt.Find(`[data-testid="receipt-read-in"]`).Text()), "Vous avez lu cette demande en anglais."; got != want {
		t.Errorf("the receipt says %q, want %q", got, want)
	}
	if lang := receipt.Find(`[data-testid="receipt-title"]`).AttrOr("lang", ""); lang != "en" {
		t.Errorf("the English title on the French receipt is marked lang=%q, want en", lang)
	}
}
