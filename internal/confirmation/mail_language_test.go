package confirmation_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/locale/pseudotest"
	"countersign/internal/mail"
)

// mailNow is the moment the mails below are written: April 1, 2026.
var mailNow = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

// fullQuote is a request whose quote has every part a mail shows, in
// English with a French translation, its amount in euros, replacing an
// earlier version; data are the business's own words in it.
func fullQuote(t *testing.T) (inv controlplane.Invocation, brand adapter.Brand, data []string) {
	t.Helper()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	amount := int64(4210)
	ordered, effective, deadline := mailNow.AddDate(0, 0, -9), mailNow.Add(48*time.Hour), mailNow.Add(24*time.Hour)
	cf := &adapter.CustomerFacts{Title: "Refund your Walnut desk lamp", Reference: "Order #1042", Date: &ordered,
		Items: []string{"Walnut desk lamp × 1"}, Why: []string{"The shade was kept back"}, MoneyArrives: "Within 5–10 business days"}
	inv = controlplane.Invocation{ID: "inv_2", System: "shop", SupersedesID: "inv_1", DeadlineAt: &deadline, Quote: adapter.Quote{
		Title: "Refund order 1042", AmountCents: &amount, Currency: "EUR", EffectiveAt: &effective, Customer: cf,
		Lines: []adapter.QuoteLine{{Label: "Ship to", From: "1 Old Road", To: "2 New Street"}, {Label: "Card", To: "ending 4242"},
			{Customer: "You keep the lamp's base", Emphasis: true}},
		Consequences: []string{"You will not be charged on May 1"},
		Translations: map[string]adapter.QuoteWords{"fr": {Title: "Rembourser la commande 1042",
			Lines: []adapter.QuoteLineWords{{Label: "Livrer à", From: "1 Old Road", To: "2 New Street"}, {Label: "Carte", To: "finissant par 4242"},
				{Customer: "Vous gardez le pied de la lampe"}},
			Consequences: []string{"Rien ne vous sera prélevé le 1er mai"},
			Customer:     &adapter.CustomerWords{Title: "Remboursement de votre lampe en noyer", Why: []string{"L’abat-jour a été retenu"}}}},
	}}
	brand = adapter.Brand{Name: "Harbour & Pine", Zone: paris}
	data = []string{"Harbour & Pine", "Jordan Lee", "jordan@example.test", "https://console.test/m/tok", "123456", cf.Title, cf.Reference,
		cf.Items[0], cf.Why[0], cf.MoneyArrives, "1 Old Road", "2 New Street", "Ship to", "Card", "ending 4242", "You keep the lamp's base",
		"You will not be charged on May 1", "CEST"}
	return inv, brand, data
}

// strays is what of m is text neither from a catalogue nor in data: its
// subject, sender's name, each line of the plain part and the HTML part.
func strays(m mail.Message, data ...string) []string {
	var out []string
	for _, s := range append([]string{m.Subject, m.FromName}, strings.Split(m.Body, "\n")...) {
		if rest := pseudotest.Stray(s, data...); rest != "" {
			out = append(out, "text: "+s)
		}
	}
	return append(out, pseudotest.SentenceStrays(m.HTML, data...)...)
}

// TestEveryCustomerMailInThePseudoLocaleComesFromTheCatalogue: the quote
// mail with its link and the code mail, rendered in the pseudo-locale,
// hold no text but catalogue texts and the business's data, in the
// subject, the sender's name, the plain part and the HTML part.
func TestEveryCustomerMailInThePseudoLocaleComesFromTheCatalogue(t *testing.T) {
	cat, err := locale.Load(locale.WithPseudo())
	if err != nil {
		t.Fatal(err)
	}
	l := cat.For(locale.Pseudo)
	inv, brand, data := fullQuote(t)
	to := adapter.Contact{Email: "jordan@example.test", Name: "Jordan Lee"}
	for name, m := range map[string]mail.Message{
		"link": confirmation.LinkMail(l, to, "https://console.test/m/tok", inv, brand, mailNow.Add(30*time.Minute), mailNow),
		"code": confirmation.CodeMail(l, to, "123456", inv, brand, mailNow),
		"link without a name": confirmation.LinkMail(l, adapter.Contact{Email: to.Email}, "https://console.test/m/tok", inv,
			brand, mailNow.Add(30*time.Minute), mailNow),
	} {
		if got := strays(m, data...); len(got) > 0 {
			t.Errorf("the %s mail has text from no catalogue:\n%s", name, strings.Join(got, "\n"))
		}
		if !strings.Contains(m.HTML, `<html lang="en-XA" dir="ltr">`) {
			t.Errorf("the %s mail's HTML does not say its language", name)
		}
	}
}

// TestAFrenchMailIsFrenchThroughout: a French customer's mail has the
// French subject and sender, the quote's French translation, the amount
// as French writes euros and the times in French in the business's zone.
func TestAFrenchMailIsFrenchThroughout(t *testing.T) {
	inv, brand, _ := fullQuote(t)
	m := confirmation.LinkMail(locale.Shipped().For(language.French), adapter.Contact{Email: "j@example.test", Name: "Jordan"},
		"https://console.test/m/tok", inv, brand, mailNow.Add(30*time.Minute), mailNow)
	if want := "Une demande de Harbour & Pine attend votre décision"; m.Subject != want {
		t.Errorf("subject %q; want %q", m.Subject, want)
	}
	if m.FromName != "Harbour & Pine via Countersign" {
		t.Errorf("from %q", m.FromName)
	}
	for _, want := range []string{
		"Bonjour Jordan,",
		"    Remboursement de votre lampe en noyer\n    Order #1042\n    chez Harbour & Pine\n",
		"  • Montant\u00a0: 42,10\u00a0€\n",
		"  • Livrer à\u00a0: 1 Old Road → 2 New Street\n",
		"Motif\u00a0: L’abat-jour a été retenu",
		"Rien ne vous sera prélevé le 1er mai",
		"Prend effet\u00a0: 3 avr., 11:00 CEST",
		"Veuillez décider au plus tard le 2 avr., 11:00 CEST.",
		"Il est valable jusqu’au 1er avr., 11:30 CEST.",
		"Examiner et décider\nhttps://console.test/m/tok\n",
	} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("the plain part lacks %q:\n%s", want, m.Body)
		}
	}
	for _, want := range []string{`<html lang="fr" dir="ltr">`, "<bdi>42,10\u00a0€</bdi>", "<s><bdi>1 Old Road</bdi></s> → <bdi>2 New Street</bdi>",
		">Examiner et décider</a>"} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("the HTML part lacks %q:\n%s", want, m.HTML)
		}
	}
}

// TestAnArabicMailDecodesToArabic: an Arabic code mail, as a mail reader
// receives it (RFC 2047 subject and sender, quoted-printable parts),
// decodes back to the Arabic written, its HTML right to left with the
// Latin data isolated, the code's lifetime in Arabic's plural form.
func TestAnArabicMailDecodesToArabic(t *testing.T) {
	inv, brand, _ := fullQuote(t)
	m := confirmation.CodeMail(locale.Shipped().For(language.Arabic), adapter.Contact{Email: "j@example.test", Name: "Jordan"},
		"123456", inv, brand, mailNow)
	dir := t.TempDir()
	if err := (mail.Dir{Path: dir, From: "no-reply@console.test"}).Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var dec mime.WordDecoder
	if got, err := dec.DecodeHeader(msg.Header.Get("Subject")); err != nil || got != "رمزك لتأكيد طلب لدى Harbour & Pine" {
		t.Errorf("subject %q (%v)", got, err)
	}
	if from, err := msg.Header.AddressList("From"); err != nil || from[0].Name != "Harbour & Pine عبر Countersign" {
		t.Errorf("from %v (%v)", from, err)
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	// multipart decodes quoted-printable parts as a mail reader does.
	r := multipart.NewReader(msg.Body, params["boundary"])
	var parts []string
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, strings.ReplaceAll(string(b), "\r\n", "\n"))
	}
	if len(parts) != 2 {
		t.Fatalf("%d parts; want 2", len(parts))
	}
	// Each line opens with a right-to-left mark; the business's words sit
	// in isolates (U+2068 … U+2069), so the arrow points from the old
	// value to the new as Arabic reads. An amount carries no
	// direction mark of its own (money.InLocale leaves CLDR's out).
	for _, want := range []string{"\u200fمرحبًا \u2068Jordan\u2069،\n", "\u200fرمزك هو \u2068123456\u2069\n",
		"\u200f  • المبلغ: \u206842.10\u00a0€\u2069\n",
		"\u200fالرمز صالح لمدة 10 دقائق. إذا لم تطلبه، فتجاهل هذه الرسالة: لن يتغيّر شيء دون الرمز.\n",
		"\u200f  • \u2068Ship to\u2069: \u20681 Old Road\u2069 ← \u20682 New Street\u2069\n"} {
		if !strings.Contains(parts[0], want) {
			t.Errorf("the plain part lacks %q:\n%q", want, parts[0])
		}
	}
	for _, line := range strings.Split(parts[0], "\n") {
		if line != "" && !strings.HasPrefix(line, "\u200f") {
			t.Errorf("the line %q does not open right to left", line)
		}
	}
	for _, want := range []string{`<html lang="ar" dir="rtl">`, "<title>رمزك</title>", "رمزك هو <b><bdi>123456</bdi></b>",
		"<bdi>Harbour &amp; Pine</bdi>", `<th style="text-align:start"><bdi>Ship to</bdi></th>`} {
		if !strings.Contains(parts[1], want) {
			t.Errorf("the HTML part lacks %q:\n%s", want, parts[1])
		}
	}
}
