package shopadapter_test

import (
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/locale"
	"countersign/internal/locale/pseudotest"
	"countersign/internal/shopadapter"
)

// TestQuoteTextsComeFromTheCatalogue writes every customer-facing quote of
// the shop in the pseudo-locale: each text a customer reads must be a
// catalogue text (⟦…⟧) or the business's own data (the target, item
// names, addresses, the e-mail address, order and invoice numbers), so
// no sentence is left written in code.
func TestQuoteTextsComeFromTheCatalogue(t *testing.T) {
	t.Parallel()
	cat, err := locale.Load(locale.WithPseudo())
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t)
	pseudo := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: b.url, Token: shopToken, Ledger: b.ledger, Now: clock, Catalogue: cat})
	address := map[string]any{"name": "Ada Lovelace", "line1": "12 rue de la Paix", "city": "Paris", "postal_code": "75002", "country": "FR"}
	for _, tc := range []struct {
		principal adapter.Principal
		action    string
		args      map[string]any
	}{
		{jordan, shopadapter.ActionCancelSubscription, map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"}},
		{noah, shopadapter.ActionCancelSubscription, map[string]any{"subscription_id": "Business", "reason_code": "switching", "effective": "immediately"}},
		{hannah, shopadapter.ActionReinstateSubscription, map[string]any{"subscription_id": "my Pro plan"}},
		{jordan, shopadapter.ActionIssueRefund, map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}},
		{jordan, shopadapter.ActionResendReceipt, map[string]any{"invoice_id": "paid Pro invoice"}},
		{jordan, shopadapter.ActionChangeShippingAddress, map[string]any{"order_id": "standing desk mat", "address": address}},
	} {
		q, err := pseudo.DryRun(t.Context(), tc.principal, tc.action, raw(t, tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.action, err)
		}
		w, ok := q.Translations[locale.Pseudo.String()]
		if !ok {
			t.Fatalf("%s: no pseudo-locale texts among %d translations", tc.action, len(q.Translations))
		}
		data := businessData(q, tc.principal)
		texts := append([]string{w.Title, w.ConfirmLabel, w.DeclineLabel}, w.Consequences...)
		texts = append(texts, w.Constraints...)
		for _, l := range w.Lines {
			texts = append(texts, l.Label, l.From, l.To, l.Customer)
		}
		if c := w.Customer; c != nil {
			texts = append(append(texts, c.Title, c.DateLabel, c.MoneyArrives), c.Why...)
		}
		for _, text := range texts {
			if rest := pseudotest.Stray(text, data...); rest != "" {
				t.Errorf("%s: %q is not from the catalogue (%q left)", tc.action, text, rest)
			}
		}
	}
}

// businessData are the quote's words that are the business's own: the
// target, its plan and site, item names, the order's number, addresses
// and the customer's e-mail address.
func businessData(q adapter.Quote, p adapter.Principal) []string {
	data := []string{q.Target.ID, q.Target.Display, p.CustomerRef}
	if plan, site, ok := strings.Cut(q.Target.Display, " plan for "); ok {
		data = append(data, plan, site)
	}
	if number, ok := strings.CutPrefix(q.Target.Display, "Invoice "); ok {
		data = append(data, strings.Fields(number)[0])
	}
	if c := q.Customer; c != nil {
		data = append(data, strings.TrimPrefix(c.Reference, "Order "))
		for _, it := range c.Items {
			name, _, _ := strings.Cut(it, " × ")
			data = append(data, name)
		}
	}
	for _, l := range q.Lines {
		if l.Label == "Ship to" || l.Label == "Send to" {
			data = append(data, l.From, l.To)
		}
	}
	return data
}

// TestTheInstalledCatalogueWritesTheQuotes: an adapter given no catalogue
// writes its quotes from the installation's (locale.Install, what
// -locales-dir loads), so a language an installation adds reaches the
// shop's quotes, not the pages alone. Not parallel: it changes the
// process's catalogue and puts the shipped one back.
func TestTheInstalledCatalogueWritesTheQuotes(t *testing.T) {
	cat, err := locale.Load(locale.WithPseudo())
	if err != nil {
		t.Fatal(err)
	}
	locale.Install(cat)
	t.Cleanup(func() { locale.Install(locale.Shipped()) })
	b := setup(t)
	a := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: b.url, Token: shopToken, Ledger: b.ledger, Now: clock})
	q, err := a.DryRun(t.Context(), jordan, shopadapter.ActionIssueRefund,
		raw(t, map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := q.Translations[locale.Pseudo.String()]; !ok {
		t.Errorf("the quote carries %d translations, none in the installed catalogue's added language", len(q.Translations))
	}
}
