package httpadapter_test

import (
	"context"
	"strings"
	"testing"
)

// TestDoneWordsAndOrderReferencePerLocale: a file's done words and its
// customer reference may be written per locale; the quote carries them
// in each, the assistant is told the default locale's done words, and a
// file in one locale writes its quote as before, without them.
func TestDoneWordsAndOrderReferencePerLocale(t *testing.T) {
	t.Parallel()
	a, shop := connectFile(t, "testdata/shop-http-locales.json", nil)
	b := &testBundle{a: a, url: shop.URL, token: shop.Token()}
	q, err := a.DryRun(context.Background(), jordan, "resend_receipt", raw(t, map[string]any{"invoice_id": b.paidInvoice(t)}))
	if err != nil {
		t.Fatal(err)
	}
	for loc, want := range map[string]string{"en": "The receipt has been sent again", "fr": "Le reçu vous a été renvoyé",
		"de": "Der Beleg wurde Ihnen erneut gesendet", "de-AT": "Der Beleg wurde Ihnen erneut gesendet"} {
		if got := q.In(loc).DoneWords; got != want {
			t.Errorf("done words in %s %q, want %q", loc, got, want)
		}
	}
	for _, s := range a.Actions() {
		if s.Name == "resend_receipt" && s.DoneWords != "The receipt has been sent again" {
			t.Errorf("the assistant is told %q", s.DoneWords)
		}
	}

	r, err := a.DryRun(context.Background(), jordan, "issue_refund", raw(t, map[string]any{"order_id": "walnut lamp", "amount_cents": 1500, "reason_code": "damaged"}))
	if err != nil {
		t.Fatal(err)
	}
	number, ok := strings.CutPrefix(r.Customer.Reference, "Order ")
	if !ok {
		t.Fatalf("the written reference is %q", r.Customer.Reference)
	}
	if got := r.In("fr").Customer.Reference; got != "Commande "+number {
		t.Errorf("the French reference %q, want %q", got, "Commande "+number)
	}
	if got := r.In("de").Customer.Reference; got != "Bestellung "+number {
		t.Errorf("the German reference %q, want %q", got, "Bestellung "+number)
	}

	plain := newBundle(t)
	p, err := plain.a.DryRun(context.Background(), jordan, "resend_receipt", raw(t, map[string]any{"invoice_id": plain.paidInvoice(t)}))
	if err != nil {
		t.Fatal(err)
	}
	if p.DoneWords != "" {
		t.Errorf("a file in one locale writes done words %q into its quote", p.DoneWords)
	}
}
