package httpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"countersign/internal/httpadapter"
)

func readLocalesFile(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/shop-http-locales.json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestQuoteTextsLoadPerLocale: a file whose quote texts are plain strings
// covers its default locale only; one with per-locale texts covers every
// locale they are written in, the default included.
func TestQuoteTextsLoadPerLocale(t *testing.T) {
	cases := []struct {
		name, file string
		raw        []byte
		want       []string
	}{
		{"plain strings", "shop-http.json", readShopFile(t), []string{"en"}},
		{"per-locale texts", "shop-http-locales.json", readLocalesFile(t), []string{"de", "en", "fr"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := httpadapter.Load(tc.file, tc.raw, httpadapter.Config{Getenv: shopEnv})
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Locales(); !slices.Equal(got, tc.want) || a.DefaultLocale() != "en" {
				t.Errorf("locales %v, default %q; want %v, en", got, a.DefaultLocale(), tc.want)
			}
		})
	}
}

// TestQuoteTextRefusals breaks the per-locale file one way at a time: each
// refusal names the file, the line, the field (down to the locale) and the
// fix.
func TestQuoteTextRefusals(t *testing.T) {
	title := `"fr": "Renvoyer le reçu de la facture {target.number}"`
	cases := []struct {
		name, old, new string
		want           []string
		// at, when set, is where the refused field begins, if not at old.
		at string
	}{
		{"the default locale missing", `"en": "Resend the receipt for invoice {target.number}",`, ``,
			[]string{"/actions/1/quote/title:", `has no "en" entry, the file's default locale (it has de, fr)`, `fix: add "en": the text in the default locale`}, `"title": {`},
		{"a placeholder dropped in one locale", title, `"fr": "Renvoyer le reçu de la facture"`,
			[]string{"/actions/1/quote/title/fr:", "the fr text has the placeholders none but the en text has {target.number}", "fix: use exactly the placeholders of the en text"}, ""},
		{"a placeholder changed in one locale", title, `"fr": "Renvoyer le reçu de la facture {target.id}"`,
			[]string{"/actions/1/quote/title/fr:", "the fr text has the placeholders {target.id} but the en text has {target.number}"}, ""},
		{"a placeholder differing in a line's label", `"fr": "Montant"`, `"fr": "Montant {target.currency}"`,
			[]string{"/actions/1/quote/lines/0/label/fr:", "placeholders {target.currency}"}, ""},
		{"a locale tag not in canonical form", title, `"FR": "Renvoyer le reçu de la facture {target.number}"`,
			[]string{"/actions/1/quote/title/FR:", "not a language tag in its canonical form", `fix: write it "fr"`}, ""},
		{"a default locale the per-locale texts lack", `"locale": "en"`, `"locale": "es"`,
			[]string{"/actions/1/quote/title:", `has no "es" entry`, `fix: add "es"`}, `"title": {`},
		{"a per-locale text with no locale", `"confirm_label": {"en": "Send receipt", "fr": "Envoyer le reçu", "de": "Beleg senden"}`, `"confirm_label": {}`,
			[]string{"/actions/1/quote/confirm_label"}, ""},
		{"done words without the default locale", `"en": "The receipt has been sent again", `, ``,
			[]string{"/actions/1/done_words:", `has no "en" entry, the file's default locale (it has de, fr)`, `fix: add "en"`}, `"done_words": {`},
		{"done words with a placeholder in one locale", `"fr": "Le reçu vous a été renvoyé"`, `"fr": "Le reçu {target.number} vous a été renvoyé"`,
			[]string{"/actions/1/done_words/fr:", "the fr text has the placeholders {target.number} but the en text has none"}, ""},
		{"an order reference with a placeholder changed in one locale", `"fr": "Commande {target.number}"`, `"fr": "Commande {target.id}"`,
			[]string{"/actions/0/quote/customer/reference/fr:", "the fr text has the placeholders {target.id} but the en text has {target.number}"}, ""},
		{"a default locale that is not a tag", `"locale": "en"`, `"locale": "en_GB!"`,
			[]string{"/customer_brand/locale"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := readLocalesFile(t)
			i := bytes.Index(raw, []byte(tc.old))
			if i < 0 {
				t.Fatalf("the file has no %s", tc.old)
			}
			if tc.at != "" {
				i = bytes.Index(raw, []byte(tc.at))
			}
			line := bytes.Count(raw[:i], []byte("\n")) + 1
			raw = bytes.Replace(raw, []byte(tc.old), []byte(tc.new), 1)
			_, err := httpadapter.Load("shop-http-locales.json", raw, httpadapter.Config{Getenv: shopEnv})
			var fe *httpadapter.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("the broken file loaded or failed otherwise: %v", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "shop-http-locales.json:") {
				t.Errorf("error %q does not name the file", msg)
			}
			if !strings.Contains(msg, fmt.Sprintf("shop-http-locales.json:%d: ", line)) {
				t.Errorf("error %q does not name line %d", msg, line)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// TestLocalTextJSON: a plain string and a per-locale object are read and
// written back in the form they were given.
func TestLocalTextJSON(t *testing.T) {
	for _, in := range []string{`"Send receipt"`, `{"en":"Send receipt","fr":"Envoyer le reçu"}`} {
		var lt httpadapter.LocalText
		if err := json.Unmarshal([]byte(in), &lt); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(lt)
		if err != nil || string(out) != in {
			t.Errorf("%s read and written back as %s (%v)", in, out, err)
		}
	}
}

// TestDryRunWritesTheQuoteInEveryLocale: a file with per-locale texts
// gives a quote written in its default locale that carries the others, so
// the customer's page can show it in theirs; a text written once reads the
// same in every locale, and the numbers do not change with the language
// but money(...) writes an amount as each locale does: $49.00 in English,
// 49,00 $US in French, 49,00 $ in German (CLDR's no-break spaces).
func TestDryRunWritesTheQuoteInEveryLocale(t *testing.T) {
	t.Parallel()
	a, shop := connectFile(t, "testdata/shop-http-locales.json", nil)
	b := &testBundle{a: a, url: shop.URL, token: shop.Token()}
	q, err := a.DryRun(context.Background(), jordan, "resend_receipt", raw(t, map[string]any{"invoice_id": b.paidInvoice(t)}))
	if err != nil {
		t.Fatal(err)
	}
	if q.Locale != "en" || len(q.Translations) != 2 {
		t.Fatalf("quote in %q with translations %v", q.Locale, slices.Sorted(maps.Keys(q.Translations)))
	}
	number := strings.TrimPrefix(q.Title, "Resend the receipt for invoice ")
	fr := q.In("fr")
	if fr.Title != "Renvoyer le reçu de la facture "+number || fr.ConfirmLabel != "Envoyer le reçu" {
		t.Errorf("French title %q, confirm %q (English %q)", fr.Title, fr.ConfirmLabel, q.Title)
	}
	var labels []string
	if q.Lines[0].To != "$49.00" || fr.Lines[0].To != "49,00\u00a0$US" || q.In("de").Lines[0].To != "49,00\u00a0$" {
		t.Errorf("the amount reads %q in English, %q in French, %q in German; want $49.00, 49,00\u00a0$US, 49,00\u00a0$",
			q.Lines[0].To, fr.Lines[0].To, q.In("de").Lines[0].To)
	}
	for i, l := range fr.Lines {
		labels = append(labels, l.Label)
		if i > 0 && (l.To != q.Lines[i].To || l.From != q.Lines[i].From) {
			t.Errorf("line %d's values change with the language: %q → %q, in English %q → %q", i, l.From, l.To, q.Lines[i].From, q.Lines[i].To)
		}
	}
	if strings.Join(labels, "|") != "Montant|Envoyer à|Reçus envoyés" {
		t.Errorf("French labels %v", labels)
	}
	if len(fr.Constraints) != 2 || fr.Constraints[0] != "Seules les factures payées ont un reçu." ||
		fr.Constraints[1] != q.Constraints[1] {
		t.Errorf("French constraints %q; the one written once should read as in English, %q", fr.Constraints, q.Constraints[1])
	}
	if de := q.In("de-AT"); de.Locale != "de" || de.DeclineLabel != "Nicht senden" {
		t.Errorf("Austrian German is shown %q: %q", de.Locale, de.DeclineLabel)
	}

	plain := newBundle(t)
	q, err = plain.a.DryRun(context.Background(), jordan, "resend_receipt", raw(t, map[string]any{"invoice_id": plain.paidInvoice(t)}))
	if err != nil {
		t.Fatal(err)
	}
	if q.Locale != "" || q.Translations != nil {
		t.Errorf("a file in one locale writes the quote in %q with %v", q.Locale, q.Translations)
	}
}

// TestATranslationShowsTheWrittenQuotesLines: which lines a quote shows is
// decided once per call, not once per language, so every translation has
// the written quote's lines even when a condition reads an amount as
// money(...) writes it (here "$49.00" in the written quote, a condition
// that would hold on French's "49,00 $US").
func TestATranslationShowsTheWrittenQuotesLines(t *testing.T) {
	t.Parallel()
	line := `{"label": {"en": "Receipts sent", "fr": "Reçus envoyés", "de": "Gesendete Belege"}, "from": "{target.receipts_sent}", "to": "{target.receipts_sent + 1}"}`
	file := strings.Replace(string(readLocalesFile(t)), line, line+`,
          {"label": {"en": "Large amount", "fr": "Gros montant", "de": "Großer Betrag"}, "to": "{money(target.amount_cents, target.currency)}",
           "when": "money(target.amount_cents, target.currency).contains(',')"}`, 1)
	if !strings.Contains(file, "Gros montant") {
		t.Fatal("the receipt's last line is not in the file any more")
	}
	path := t.TempDir() + "/shop-http-locales.json"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	a, shop := connectFile(t, path, nil)
	b := &testBundle{a: a, url: shop.URL, token: shop.Token()}
	q, err := a.DryRun(context.Background(), jordan, "resend_receipt", raw(t, map[string]any{"invoice_id": b.paidInvoice(t)}))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Lines) != 3 || len(q.Translations["fr"].Lines) != 3 {
		t.Errorf("the written quote shows %d lines and its French translation %d, want 3 each", len(q.Lines), len(q.Translations["fr"].Lines))
	}
	if fr := q.In("fr"); fr.Locale != "fr" || fr.Lines[0].Label != "Montant" {
		t.Errorf("a French reader is shown the quote in %q: %q", fr.Locale, fr.Lines[0].Label)
	}
}
