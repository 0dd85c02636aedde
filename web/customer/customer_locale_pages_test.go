package customer_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/locale/pseudotest"
	"countersign/web/webtest"
)

// unisolated is s without the isolates (U+2068 … U+2069) that keep a
// value's direction inside a sentence, for comparing the words.
func unisolated(s string) string {
	return strings.NewReplacer("\u2068", "", "\u2069", "").Replace(s)
}

// othersAreas are the parts of a request page another area writes (the
// receipt, the passkey offer and deciding with a passkey): their own
// tests hold them to the catalogue.
const othersAreas = `[data-testid="receipt"], [data-testid="passkey-offer"], [data-testid="passkey-decide"]`

// strays is what of page is neither a catalogue text nor data, outside
// the other areas' parts.
func strays(t *testing.T, res webtest.Response, data ...string) []string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(res.Text))
	if err != nil {
		t.Fatal(err)
	}
	doc.Find(othersAreas).Remove()
	html, err := doc.Html()
	if err != nil {
		t.Fatal(err)
	}
	return pseudotest.Strays(html, data...)
}

// quoteData is the business's own words in a quote: what an adapter
// wrote (not translated when it gives no translation) is data, not text
// the catalogue owes.
func quoteData(q adapter.Quote, spec adapter.ActionSpec) []string {
	out := []string{q.Title, q.ConfirmLabel, q.DeclineLabel, q.DoneWords, spec.DoneWords}
	for _, l := range q.Lines {
		out = append(out, l.Label, l.From, l.To, l.Customer)
	}
	out = append(out, q.Consequences...)
	if c := q.Customer; c != nil {
		out = append(out, c.Title, c.Reference, c.DateLabel, c.MoneyArrives)
		out = append(out, c.Items...)
		out = append(out, c.Why...)
	}
	return out
}

// stored is the invocation as the pages read it.
func stored(t *testing.T, b *webtest.Stack, id string) controlplane.Invocation {
	t.Helper()
	inv, err := b.Control.Invocation(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// TestTheCustomersPagesInThePseudoLocaleComeFromTheCatalogue renders
// every page and fragment of the customer's request in the
// pseudo-locale: the link page with its ways to prove, a wrong code, the
// request awaiting the customer, a refused decline, another request than
// the one proven, the status fragment
// the page polls, the page after confirming, My requests, /requests
// without proof, an unknown link and a request not among the customer's.
// Any visible text that is neither ⟦a catalogue text⟧ nor the business's
// data is a sentence written in code.
func TestTheCustomersPagesInThePseudoLocaleComeFromTheCatalogue(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes(), webtest.WithPseudoLocale())
	inv, link := b.PendingRefund(t)
	inv = stored(t, b, inv.ID)
	data := append(quoteData(inv.Quote, b.Control.ActionSpec(inv.System, inv.Action)), webtest.ShopName, "Countersign", inv.ID)
	check := func(name string, res webtest.Response, want int) {
		t.Helper()
		if res.StatusCode != want {
			t.Fatalf("%s: %d, want %d\n%s", name, res.StatusCode, want, res.Text)
		}
		if !strings.Contains(res.Text, "⟦") {
			t.Fatalf("%s is not in the pseudo-locale\n%s", name, res.Text)
		}
		for _, s := range strays(t, res, data...) {
			t.Errorf("%s: text not from a catalogue: %s", name, s)
		}
	}
	c := b.Client(t)
	page := c.Get(link)
	check("the link page", page, http.StatusOK)
	code := c.SendCode(link, page)
	sent := c.Get(link)
	check("the link page asking for the code", sent, http.StatusOK)
	// The masked address the code went to is the customer's data.
	to := strings.TrimSpace(sent.Doc(t).Find(`label[for="code"]`).Text())
	data = append(data, to[strings.LastIndex(to, " ")+1:])
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	res := c.TryCode(link, wrong)
	check("a wrong code", res, http.StatusUnprocessableEntity)
	if res.Doc(t).Find(`[data-testid="code-error"]`).Length() != 1 {
		t.Errorf("a wrong code says nothing of it\n%s", res.Text)
	}
	res = c.Prove(link, code)
	check("the request awaiting the customer", res, http.StatusOK)
	res = c.Post("/requests/"+inv.ID+"/decline", url.Values{"_csrf": {c.PageCSRF(res)}, "reason": {strings.Repeat("1", 1001)}})
	check("a decline with too long a reason", res, http.StatusUnprocessableEntity)
	if res.Doc(t).Find(`[data-testid="reason-error"]`).Length() != 1 {
		t.Errorf("a too long reason says nothing of it\n%s", res.Text)
	}
	check("My requests awaiting one", c.Get("/requests"), http.StatusOK)
	other, _ := b.PendingRefund(t)
	check("another request than the one proven", c.Get("/requests/"+other.ID), http.StatusUnauthorized)
	if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {c.PageCSRF(c.Get("/requests/" + inv.ID))}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm: %d\n%s", res.StatusCode, res.Text)
	}
	c.Header.Set("HX-Request", "true")
	frag := c.Get("/requests/" + inv.ID + "/status")
	c.Header.Del("HX-Request")
	if frag.StatusCode != http.StatusOK && frag.StatusCode != 286 {
		t.Fatalf("the status fragment: %d", frag.StatusCode)
	}
	frag.StatusCode = http.StatusOK
	check("the status fragment", frag, http.StatusOK)
	check("the request once confirmed", c.Get("/requests/"+inv.ID), http.StatusOK)
	check("My requests", c.Get("/requests"), http.StatusOK)
	check("a request not among the customer's", c.Get("/requests/inv_0000000000000000"), http.StatusNotFound)
	check("My requests without proof", b.Client(t).Get("/requests"), http.StatusUnauthorized)
	check("a damaged link", b.Client(t).Get("/c/not-a-link"), http.StatusBadRequest)
}

// TestTheStatusInEveryStateIsInTheCatalogue renders the status of a
// request in each state a customer meets in the pseudo-locale, from the
// control plane's own transitions: declined with a reason, on hold once
// the customer stopped the work, and expired.
func TestTheStatusInEveryStateIsInTheCatalogue(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes(), webtest.WithPseudoLocale())
	inv, link := b.PendingRefund(t)
	inv = stored(t, b, inv.ID)
	data := append(quoteData(inv.Quote, b.Control.ActionSpec(inv.System, inv.Action)), webtest.ShopName, "Countersign", "my reason")
	c := b.Client(t)
	res := c.OpenWithCode(link)
	if r := c.Post("/requests/"+inv.ID+"/decline", url.Values{"_csrf": {c.PageCSRF(res)}, "reason": {"my reason"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline: %d\n%s", r.StatusCode, r.Text)
	}
	declined := c.Get("/requests/" + inv.ID)
	if got := declined.Doc(t).Find(`[data-testid="status"]`).AttrOr("data-decided-by", ""); got != "you" {
		t.Fatalf("declined by %q\n%s", got, declined.Text)
	}
	for _, s := range strays(t, declined, data...) {
		t.Errorf("a declined request: text not from a catalogue: %s", s)
	}
	if got, _ := b.Control.Invocation(t.Context(), inv.ID); got.State != controlplane.Rejected {
		t.Fatalf("the request is %s", got.State)
	}

	// Stopped by the customer: the next request of the task is on hold.
	inv, link = b.PendingRefund(t)
	c = b.Client(t)
	res = c.OpenWithCode(link)
	if r := c.Post("/requests/"+inv.ID+"/stop", url.Values{"_csrf": {c.PageCSRF(res)}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("stop: %d\n%s", r.StatusCode, r.Text)
	}
	onHold := c.Get("/requests/" + inv.ID)
	if onHold.Doc(t).Find(`[data-testid="on-hold"]`).Length() != 1 {
		t.Fatalf("a stopped task's request is not on hold\n%s", onHold.Text)
	}
	for _, s := range strays(t, onHold, data...) {
		t.Errorf("a request on hold: text not from a catalogue: %s", s)
	}

	// Expired: nobody decided in time.
	inv, link = b.PendingRefund(t)
	c = b.Client(t)
	c.OpenWithCode(link)
	// The customer stays active (their session lasts while they are)
	// as the request's 30 minutes run out.
	b.Clock.Advance(20 * time.Minute)
	c.Get("/requests/" + inv.ID)
	b.Clock.Advance(11 * time.Minute)
	expired := c.Get("/requests/" + inv.ID)
	if got := expired.Doc(t).Find(`[data-testid="status"]`).AttrOr("data-decided-by", ""); got != "nobody" {
		t.Fatalf("expired, decided by %q\n%s", got, expired.Text)
	}
	for _, s := range strays(t, expired, data...) {
		t.Errorf("an expired request: text not from a catalogue: %s", s)
	}
}

// inEuros makes the pending refund inv a quote in euros that also speaks
// French and Arabic (adapter.Quote.Translations), as an adapter writing
// per-locale texts stores it, and returns it as stored.
func inEuros(t *testing.T, b *webtest.Stack, id string) controlplane.Invocation {
	t.Helper()
	q := stored(t, b, id).Quote
	q.Currency = "EUR"
	words := func(title, customerTitle string) adapter.QuoteWords {
		w := adapter.QuoteWords{Title: title, Consequences: q.Consequences, ConfirmLabel: q.ConfirmLabel, DeclineLabel: q.DeclineLabel,
			Customer: &adapter.CustomerWords{Title: customerTitle}}
		for _, l := range q.Lines {
			w.Lines = append(w.Lines, adapter.QuoteLineWords{Label: l.Label, From: l.From, To: l.To, Customer: l.Customer})
		}
		return w
	}
	q.Translations = map[string]adapter.QuoteWords{
		"fr": words("Rembourser la lampe", "Remboursement de votre lampe de bureau en noyer"),
		"ar": words("استرداد ثمن المصباح", "استرداد ثمن مصباح المكتب المصنوع من خشب الجوز"),
	}
	raw, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Store.Pool().Exec(t.Context(), `UPDATE invocations SET quote = $2 WHERE id = $1`, id, raw); err != nil {
		t.Fatal(err)
	}
	return stored(t, b, id)
}

// TestARefundInEurosReadsInFrenchAndArabic: a customer reading French or
// Arabic is shown the quote in their language (its translation), the
// amount as their language writes euros, the page's own words from the
// catalogue, and, once they declined, the status in their words.
func TestARefundInEurosReadsInFrenchAndArabic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tag                                  string
		title, deadline, heading, amount     string
		badge, headline, detail, waiting, nb string
		colon                                string
	}{
		{"fr", "Remboursement de votre lampe de bureau en noyer\u00a0?", "Veuillez décider avant le ",
			"Ce que cela signifie pour vous si vous confirmez", "42,10\u00a0€",
			"Vous avez refusé", "Vous avez refusé cette demande.", "Votre motif\u00a0: «\u00a0trop cher\u00a0». Rien n’a changé.",
			"En attente de votre réponse", "1 demande", "\u00a0:"},
		{"ar", "استرداد ثمن مصباح المكتب المصنوع من خشب الجوز؟", "يُرجى اتخاذ القرار قبل ",
			"ما يعنيه هذا بالنسبة إليك إذا أكّدت", "42.10\u00a0€",
			"رفضته", "رفضتَ هذا الطلب.", "السبب الذي ذكرته: «trop cher». لم يتغيّر شيء.",
			"بانتظارك", "طلب واحد", ":"},
	} {
		t.Run(tc.tag, func(t *testing.T) {
			t.Parallel()
			b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes())
			inv, link := b.PendingRefund(t)
			inEuros(t, b, inv.ID)
			c := b.Client(t)
			u, _ := url.Parse(b.Server.URL)
			c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: tc.tag, Path: "/"}})
			res := c.OpenWithCode(link)
			if got := webtest.TextByTestID(res, t, "request-title"); got != tc.title {
				t.Errorf("title %q, want %q", got, tc.title)
			}
			if got := unisolated(webtest.TextByTestID(res, t, "deadline")); !strings.HasPrefix(got, tc.deadline) {
				t.Errorf("deadline %q, want it to start %q", got, tc.deadline)
			}
			// A quote line's label ends as the language punctuates it:
			// French puts a no-break space before the colon.
			if got := res.Doc(t).Find(`[data-testid="quote-line"] dt [aria-hidden="true"]`).First().Text(); got != tc.colon {
				t.Errorf("a quote line's label ends %q, want %q", got, tc.colon)
			}
			if got := webtest.Squash(res.Doc(t).Find(`[data-testid="consequences-block"] h3`).Text()); got != tc.heading {
				t.Errorf("consequences heading %q, want %q", got, tc.heading)
			}
			list := c.Get("/requests")
			if got := webtest.TextByTestID(list, t, "row-amount"); got != tc.amount {
				t.Errorf("the list's amount %q, want %q", got, tc.amount)
			}
			head := list.Doc(t).Find(`#waiting-heading`)
			if got := strings.TrimSpace(head.Contents().First().Text()); got != tc.waiting {
				t.Errorf("the list's heading %q, want %q", got, tc.waiting)
			}
			if got := strings.TrimSpace(head.Find(`.visually-hidden`).Text()); got != tc.nb {
				t.Errorf("the list's count %q, want %q", got, tc.nb)
			}
			if r := c.Post("/requests/"+inv.ID+"/decline", url.Values{"_csrf": {c.PageCSRF(res)}, "reason": {"trop cher"}}); r.StatusCode != http.StatusSeeOther {
				t.Fatalf("decline: %d\n%s", r.StatusCode, r.Text)
			}
			done := c.Get("/requests/" + inv.ID)
			for id, want := range map[string]string{"status-badge": tc.badge, "status-headline": tc.headline, "status-detail": tc.detail} {
				if got := webtest.TextByTestID(done, t, id); got != want {
					t.Errorf("%s %q, want %q", id, got, want)
				}
			}
		})
	}
}

// TestCountedWordsInEveryLanguage: the pages' counted words take the
// form CLDR's rule gives each count, in each shipped language.
func TestCountedWordsInEveryLanguage(t *testing.T) {
	counts := []int{0, 1, 2, 5, 11, 100}
	want := map[string]map[string][]string{
		"pages.list.count": {
			"en": {"0 requests", "1 request", "2 requests", "5 requests", "11 requests", "100 requests"},
			"fr": {"0 demande", "1 demande", "2 demandes", "5 demandes", "11 demandes", "100 demandes"}, //nolint:misspell // French, not misspelt English
			"de": {"0 Anfragen", "1 Anfrage", "2 Anfragen", "5 Anfragen", "11 Anfragen", "100 Anfragen"},
			"es": {"0 solicitudes", "1 solicitud", "2 solicitudes", "5 solicitudes", "11 solicitudes", "100 solicitudes"},
			"ar": {"لا توجد طلبات", "طلب واحد", "طلبان", "5 طلبات", "11 طلبًا", "100 طلب"},
		},
		"pages.prove.code.wrong": {
			"en": {"That code is wrong; 0 tries left.", "That code is wrong; 1 try left.", "That code is wrong; 2 tries left.",
				"That code is wrong; 5 tries left.", "That code is wrong; 11 tries left.", "That code is wrong; 100 tries left."},
			"fr": {"Ce code est erroné\u00a0; il vous reste 0 essai.", "Ce code est erroné\u00a0; il vous reste 1 essai.",
				"Ce code est erroné\u00a0; il vous reste 2 essais.", "Ce code est erroné\u00a0; il vous reste 5 essais.",
				"Ce code est erroné\u00a0; il vous reste 11 essais.", "Ce code est erroné\u00a0; il vous reste 100 essais."},
			"de": {"Dieser Code ist falsch; Sie haben noch 0 Versuche.", "Dieser Code ist falsch; Sie haben noch 1 Versuch.",
				"Dieser Code ist falsch; Sie haben noch 2 Versuche.", "Dieser Code ist falsch; Sie haben noch 5 Versuche.",
				"Dieser Code ist falsch; Sie haben noch 11 Versuche.", "Dieser Code ist falsch; Sie haben noch 100 Versuche."},
			"es": {"Ese código no es correcto; le quedan 0 intentos.", "Ese código no es correcto; le queda 1 intento.",
				"Ese código no es correcto; le quedan 2 intentos.", "Ese código no es correcto; le quedan 5 intentos.",
				"Ese código no es correcto; le quedan 11 intentos.", "Ese código no es correcto; le quedan 100 intentos."},
			"ar": {"هذا الرمز غير صحيح؛ لم تتبقَّ لك أي محاولة.", "هذا الرمز غير صحيح؛ تبقّت لك محاولة واحدة.",
				"هذا الرمز غير صحيح؛ تبقّت لك محاولتان.", "هذا الرمز غير صحيح؛ تبقّت لك 5 محاولات.",
				"هذا الرمز غير صحيح؛ تبقّت لك 11 محاولة.", "هذا الرمز غير صحيح؛ تبقّت لك 100 محاولة."},
		},
	}
	for id, byTag := range want {
		for _, tag := range locale.Supported() {
			l := locale.Shipped().For(tag)
			for i, n := range counts {
				got, err := l.Localize(id, n, nil)
				if err != nil {
					t.Errorf("%s %s %d: %v", id, tag, n, err)
				}
				if w := byTag[tag.String()][i]; got != w {
					t.Errorf("%s %s %d: %q, want %q", id, tag, n, got, w)
				}
			}
		}
	}
	// Arabic reads an arrow from → to pointing left, its reading
	// direction; the others point right.
	for tag, w := range map[string]string{"en": "a → b", "fr": "a → b", "ar": "a ← b"} {
		if got := locale.Shipped().For(language.MustParse(tag)).T("pages.request.from_to", locale.Params{"From": "a", "To": "b"}); got != w {
			t.Errorf("%s from → to: %q, want %q", tag, got, w)
		}
	}
}
