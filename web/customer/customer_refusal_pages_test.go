package customer_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/confirmation"
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
