package customer_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/text/language"

	"countersign/internal/confirmation"
	"countersign/internal/locale"
	"countersign/web/webtest"
)

// postSendCode posts the link page's "E-mail me a code" with the page's
// CSRF token, whatever the answer.
func postSendCode(c *webtest.Client, link string) webtest.Response {
	c.T.Helper()
	tok, _ := c.Get(link).Doc(c.T).Find(`input[name="_csrf"]`).First().Attr("value")
	return c.Post(link+"/code", url.Values{"_csrf": {tok}})
}

// TestTheRefusalsOnTheLinkPageAreFromTheCatalogue: in the pseudo-locale,
// the refusals that carry data (too_many_codes: the last mail's time and
// masked address) and one the pages have no words of their own for (a
// code asked for where the shop takes none) come from the catalogue,
// never in the confirmation service's English.
func TestTheRefusalsOnTheLinkPageAreFromTheCatalogue(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithTypedCodes(), webtest.WithPseudoLocale())
	inv, link := b.PendingRefund(t)
	inv = stored(t, b, inv.ID)
	data := append(quoteData(inv.Quote, b.Control.ActionSpec(inv.System, inv.Action)), webtest.ShopName, "Countersign", inv.ID)
	c := b.Client(t)
	for range confirmation.DefaultCodeLimits.RequestMailsPer15Min {
		c.SendCode(link, c.Get(link))
	}
	sent := c.Get(link)
	to := strings.TrimSpace(sent.Doc(t).Find(`label[for="code"]`).Text())
	data = append(data, to[strings.LastIndex(to, " ")+1:])
	res := postSendCode(c, link)
	if res.StatusCode != http.StatusTooManyRequests || strings.Contains(res.Text, "We sent you a code") {
		t.Fatalf("a code past the request's limit: %d\n%s", res.StatusCode, res.Text)
	}
	for _, s := range strays(t, res, data...) {
		t.Errorf("too many codes: text not from a catalogue: %s", s)
	}

	only := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithPseudoLocale(),
		webtest.WithProofs(map[string][]confirmation.Proof{"*": {confirmation.ProofLink}}))
	_, link = only.PendingRefund(t)
	res = postSendCode(only.Client(t), link)
	if res.StatusCode != http.StatusForbidden || strings.Contains(res.Text, "cannot be confirmed with a code") {
		t.Fatalf("a code where the shop takes none: %d\n%s", res.StatusCode, res.Text)
	}
	for _, s := range strays(t, res, data...) {
		t.Errorf("a refusal without words: text not from a catalogue: %s", s)
	}
}

// TestTheErrorPagesOfACustomersRoutesAreInTheirLanguage: an error no
// customer handler words — a form refused by the CSRF check in front of
// every route, before the handler decided the language, and an internal
// one, which kit.Describe words in English — reads, on a French
// customer's page, in French: its title and its sentence.
func TestTheErrorPagesOfACustomersRoutesAreInTheirLanguage(t *testing.T) {
	t.Parallel()
	fr := locale.Shipped().For(language.French)
	check := func(what string, res webtest.Response, status int, id string) {
		t.Helper()
		if res.StatusCode != status {
			t.Fatalf("%s: %d, want %d\n%s", what, res.StatusCode, status, res.Text)
		}
		doc := res.Doc(t)
		if got, want := strings.TrimSpace(doc.Find(`[data-testid="error-page"] h1`).Text()), fr.T(fmt.Sprintf("pages.error.title.%d", status), nil); got != want {
			t.Errorf("%s: the title is %q, want %q", what, got, want)
		}
		if got, want := webtest.TextByTestID(res, t, "error-message"), fr.T(id, nil); got != want {
			t.Errorf("%s: the page says %q, want %q", what, got, want)
		}
	}

	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	_, link := b.PendingRefund(t)
	c := b.Client(t)
	c.Header.Set("Accept-Language", "fr-FR,fr;q=0.9")
	c.Get(link)
	check("a form with a token that is not the page's", c.Post(link+"/code", url.Values{"_csrf": {"not-the-pages"}}),
		http.StatusForbidden, "pages.error.csrf")

	b.Store.Pool().Close()
	check("the link's page with the database gone", c.Get(link), http.StatusInternalServerError, "pages.error.internal")
}
