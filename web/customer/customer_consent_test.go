package customer_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/web/webtest"
)

// customerDoors are every route that carries a customer's decision on a
// quote ("Stop this" decides no quote). Each posts the quote its page
// showed; TestEveryCustomerDecisionDoorPostsTheQuoteShown holds each to it.
var customerDoors = []struct {
	name, verb string
	state      controlplane.State
}{
	{"confirm", "confirm", controlplane.Approved},
	{"decline", "decline", controlplane.Rejected},
}

// TestEveryCustomerDecisionDoorPostsTheQuoteShown: each decision form of
// the customer's page names the quote it shows (its version and the
// digest of the quote JSON it was rendered from, as the control plane
// computes it); a post naming no quote or an earlier version answers 409
// with the page as it is now and "The details changed", deciding nothing;
// the post as the page makes it decides, and the consent recorded is
// the one shown with the proof the browser made.
func TestEveryCustomerDecisionDoorPostsTheQuoteShown(t *testing.T) {
	t.Parallel()
	for _, door := range customerDoors {
		t.Run(door.name, func(t *testing.T) {
			t.Parallel()
			b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
			inv, link := b.PendingRefund(t)
			c := b.Client(t)
			page := c.Open(link)
			tok := c.PageCSRF(page)
			form := page.Doc(t).Find(`form[action="/requests/` + inv.ID + `/` + door.verb + `"]`)
			version, _ := form.Find(`input[name="quote_version"]`).Attr("value")
			digest, _ := form.Find(`input[name="quote_digest"]`).Attr("value")
			want, _ := consent.QuoteDigest(inv.QuoteJSON)
			if version != strconv.Itoa(int(inv.Version)) || digest != base64.RawURLEncoding.EncodeToString(want) {
				t.Fatalf("the %s form names version %q digest %q, want %d and the stored quote's", door.verb, version, digest, inv.Version)
			}
			path := "/requests/" + inv.ID + "/" + door.verb
			for name, sent := range map[string]url.Values{
				"no quote":           {"_csrf": {tok}, "quote_version": {""}},
				"an earlier version": {"_csrf": {tok}, "quote_version": {strconv.Itoa(int(inv.Version) - 1)}, "quote_digest": {digest}},
				"a damaged digest":   {"_csrf": {tok}, "quote_version": {version}, "quote_digest": {"AAAA"}},
			} {
				res := c.Post(path, sent)
				if res.StatusCode != http.StatusConflict || webtest.TextByTestID(res, t, "quote-changed") == "" {
					t.Errorf("%s with %s: %d, want 409 with the page saying the details changed", door.verb, name, res.StatusCode)
				}
			}
			if got := b.Invocation(t, inv.ID); got.State != controlplane.AwaitingConfirmation || got.Version != inv.Version {
				t.Fatalf("after refused posts: %s v%d", got.State, got.Version)
			}
			if res := c.Post(path, url.Values{"_csrf": {tok}, "quote_version": {version}, "quote_digest": {digest}}); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("%s as the page posts it: %d\n%s", door.verb, res.StatusCode, res.Text)
			}
			if got := b.Invocation(t, inv.ID); got.State != door.state {
				t.Fatalf("after the %s: %s", door.verb, got.State)
			}
			got, ok, err := b.Control.Consent(context.Background(), inv.ID)
			if err != nil || !ok || got.Decision != door.verb || got.Proof != "link" || !bytes.Equal(got.QuoteDigest, want) {
				t.Fatalf("the consent recorded: %+v, %v, %v", got, ok, err)
			}
		})
	}
}
