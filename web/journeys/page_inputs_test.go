package journeys_test

import (
	"net/http"
	"testing"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
)

// everyInputTyped fails for each <input> of doc without a type: the
// stylesheet styles inputs by type, so an untyped one is left a bare
// 180×20 px box.
func everyInputTyped(t *testing.T, where string, doc *goquery.Document) {
	t.Helper()
	inputs := doc.Find("input")
	if inputs.Length() == 0 {
		t.Fatalf("%s has no inputs", where)
	}
	inputs.Each(func(_ int, s *goquery.Selection) {
		if typ, ok := s.Attr("type"); !ok || typ == "" {
			t.Errorf("%s: <input name=%q> has no type", where, s.AttrOr("name", ""))
		}
	})
}

// TestCodeBoxAndPolicyFieldsHaveTypes: every input of the customer's code
// page and of a policy's form has a type; the code box asks for digits and
// lets the device fill in the code from the message.
func TestCodeBoxAndPolicyFieldsHaveTypes(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithTypedCodes(), webtest.WithShop(), webtest.WithCustomerStage())
	_, link := b.PendingRefund(t)
	c := b.Client(t)
	c.SendCode(link, c.Get(link))
	page := c.Get(link).Doc(t)
	everyInputTyped(t, "the code page", page)
	code := page.Find(`[data-testid="code-form"] input[name="code"]`)
	if code.AttrOr("inputmode", "") != "numeric" || code.AttrOr("autocomplete", "") != "one-time-code" {
		t.Errorf("the code box has inputmode %q and autocomplete %q, want numeric and one-time-code",
			code.AttrOr("inputmode", ""), code.AttrOr("autocomplete", ""))
	}

	m := b.Client(t)
	m.MustSignIn(b.Users[accounts.Manager])
	res := m.Get("/policies/shop/issue_refund")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET the policy: %d", res.StatusCode)
	}
	doc := res.Doc(t)
	everyInputTyped(t, "the policy form", doc)
	if n := doc.Find(`div.check > input[type="checkbox"]#enabled + label[for="enabled"]`).Length(); n != 1 {
		t.Errorf("the policy's Enabled checkbox is not on its label's line (%d found)", n)
	}
}
