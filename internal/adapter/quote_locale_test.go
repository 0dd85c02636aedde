package adapter

import (
	"encoding/json"
	"strings"
	"testing"
)

func localeQuote() Quote {
	amount := int64(1200)
	return Quote{Title: "Resend the receipt for invoice INV-7", Locale: "en", AmountCents: &amount, Currency: "usd",
		Lines:        []QuoteLine{{Label: "Amount", To: "$12.00", Emphasis: true}},
		Consequences: []string{"A copy will be e-mailed."}, ConfirmLabel: "Send receipt", DeclineLabel: "Don't send",
		Customer: &CustomerFacts{Title: "Resend your receipt", Reference: "INV-7", Why: []string{"Paid."}},
		Translations: map[string]QuoteWords{
			"fr": {Title: "Renvoyer le reçu de la facture INV-7", Lines: []QuoteLineWords{{Label: "Montant", To: "12,00 $US"}},
				Consequences: []string{"Une copie vous sera envoyée."}, ConfirmLabel: "Envoyer le reçu", DeclineLabel: "Ne pas envoyer",
				Customer: &CustomerWords{Title: "Renvoyer votre reçu", Why: []string{"Payée."}}},
			// A translation whose lines do not match the quote's.
			"de": {Title: "Beleg senden", Lines: []QuoteLineWords{}},
		}}
}

// TestQuoteIn: a page shows the quote in the customer's locale or its
// nearest parent, else as written; the numbers, flags and the system's
// references never change with the language.
func TestQuoteIn(t *testing.T) {
	cases := []struct {
		locale, wantLocale, wantTitle, wantLabel string
	}{
		{"fr", "fr", "Renvoyer le reçu de la facture INV-7", "Montant"},
		{"fr-CA", "fr", "Renvoyer le reçu de la facture INV-7", "Montant"},
		{"en", "en", "Resend the receipt for invoice INV-7", "Amount"},
		{"en-IE", "en", "Resend the receipt for invoice INV-7", "Amount"},
		{"es", "en", "Resend the receipt for invoice INV-7", "Amount"},
		{"de", "en", "Resend the receipt for invoice INV-7", "Amount"},
		{"", "en", "Resend the receipt for invoice INV-7", "Amount"},
		{"not a tag!", "en", "Resend the receipt for invoice INV-7", "Amount"},
	}
	for _, tc := range cases {
		q := localeQuote()
		got := q.In(tc.locale)
		if got.Locale != tc.wantLocale || got.Title != tc.wantTitle || got.Lines[0].Label != tc.wantLabel {
			t.Errorf("In(%q): locale %q, title %q, label %q; want %q, %q, %q", tc.locale, got.Locale, got.Title, got.Lines[0].Label,
				tc.wantLocale, tc.wantTitle, tc.wantLabel)
		}
		if got.Translations != nil || *got.AmountCents != 1200 || !got.Lines[0].Emphasis || got.Customer.Reference != "INV-7" {
			t.Errorf("In(%q) changed more than the words: %+v", tc.locale, got)
		}
		if q.Title != "Resend the receipt for invoice INV-7" || q.Lines[0].Label != "Amount" || q.Customer.Title != "Resend your receipt" {
			t.Errorf("In(%q) changed the quote it was called on: %+v", tc.locale, q)
		}
	}
	fr := localeQuote().In("fr")
	if fr.Customer.Title != "Renvoyer votre reçu" || fr.Customer.Why[0] != "Payée." || fr.ConfirmLabel != "Envoyer le reçu" {
		t.Errorf("the French customer facts and labels: %+v %+v", fr, fr.Customer)
	}
}

// TestQuoteWithoutTranslationsKeepsItsJSON: a quote written in one locale
// is stored as before, so the receipts of quotes decided before issue 37
// still hash the same.
func TestQuoteWithoutTranslationsKeepsItsJSON(t *testing.T) {
	b, err := json.Marshal(Quote{Title: "Cancel", Lines: []QuoteLine{}, Consequences: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "locale") || strings.Contains(string(b), "translations") {
		t.Errorf("a quote in one locale is written %s", b)
	}
}

// TestQuoteInDoneWordsReferenceAndItems: a translation's done words,
// reference and items are shown in its locale; a translation stored
// before it had them (or a quote without done words) shows the written
// ones, never empty.
func TestQuoteInDoneWordsReferenceAndItems(t *testing.T) {
	q := localeQuote()
	q.DoneWords = "The receipt has been sent again"
	q.Customer.Items = []string{"Receipt × 1"}
	old := q.In("fr")
	if old.DoneWords != q.DoneWords || old.Customer.Reference != "INV-7" || len(old.Customer.Items) != 1 || old.Customer.Items[0] != "Receipt × 1" {
		t.Errorf("an older translation shows done %q, reference %q, items %q", old.DoneWords, old.Customer.Reference, old.Customer.Items)
	}
	fr := q.Translations["fr"]
	fr.DoneWords = "Le reçu vous a été renvoyé"
	fr.Customer.Reference, fr.Customer.Items = "Facture INV-7", []string{"Reçu × 1"}
	q.Translations["fr"] = fr
	got := q.In("fr-CA")
	if got.DoneWords != "Le reçu vous a été renvoyé" || got.Customer.Reference != "Facture INV-7" || got.Customer.Items[0] != "Reçu × 1" {
		t.Errorf("French shows done %q, reference %q, items %q", got.DoneWords, got.Customer.Reference, got.Customer.Items)
	}
	if en := q.In("en"); en.DoneWords != q.DoneWords || en.Customer.Reference != "INV-7" {
		t.Errorf("English shows done %q, reference %q", en.DoneWords, en.Customer.Reference)
	}
}

// TestQuoteInShowsNoTranslationThatSaysOtherwise: a translation with a
// consequence, a reason or an item less (or more) than the written quote
// is not shown; the reader gets the quote as written. One without its
// reasons (stored before it had them) shows the written ones.
func TestQuoteInShowsNoTranslationThatSaysOtherwise(t *testing.T) {
	cases := map[string]func(w *QuoteWords){
		"a consequence less": func(w *QuoteWords) { w.Consequences = nil },
		"a consequence more": func(w *QuoteWords) { w.Consequences = append(w.Consequences, "De plus.") },
		"a reason less":      func(w *QuoteWords) { w.Customer.Why = []string{} },
		"an item more":       func(w *QuoteWords) { w.Customer.Items = []string{"Lampe × 1", "Bureau × 1"} },
	}
	for name, drop := range cases {
		q := localeQuote()
		q.Customer.Items = []string{"Lamp × 1"}
		fr := q.Translations["fr"]
		c := *fr.Customer
		fr.Customer = &c
		drop(&fr)
		q.Translations["fr"] = fr
		if got := q.In("fr"); got.Locale != "en" || got.Title != q.Title || len(got.Consequences) != 1 {
			t.Errorf("a translation with %s was shown: %+v", name, got)
		}
	}
	if got := localeQuote().In("fr"); got.Locale != "fr" {
		t.Errorf("a translation that says it all was not shown: locale %q", got.Locale)
	}
	q := localeQuote()
	fr := q.Translations["fr"]
	fr.Customer = &CustomerWords{Title: "Renvoyer votre reçu"}
	q.Translations["fr"] = fr
	if got := q.In("fr"); got.Locale != "fr" || len(got.Customer.Why) != 1 || got.Customer.Why[0] != "Paid." {
		t.Errorf("a translation without its reasons: locale %q, reasons %q; want fr with the written reason", got.Locale, got.Customer.Why)
	}
}
