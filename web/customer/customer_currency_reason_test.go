package customer_test

import (
	"net/http"
	"net/url"
	"testing"

	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/web/webtest"
)

// TestARequestNotSentForItsCurrencySaysWhyInTheCustomersLanguage: a
// request that ended not_dispatched at its permit because its currency
// could not be checked against the policy's limits tells the customer so,
// and who can help, in their language, not the generic "ask the
// assistant" of a reason the page has no words for.
func TestARequestNotSentForItsCurrencySaysWhyInTheCustomersLanguage(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	inv, link := b.PendingRefund(t)
	c := b.Client(t)
	c.Open(link)
	u, _ := url.Parse(b.Server.URL)
	for _, reason := range []controlplane.NotDispatchedReason{controlplane.ReasonCurrencyNotLimited, controlplane.ReasonMixedCurrency} {
		put(t, b, inv.ID, situation{state: controlplane.NotDispatched, notDispatched: string(reason)})
		for _, tc := range []struct{ tag, detail string }{
			{"en", "We could not check this amount against our limits because of its currency, so nothing was sent. A person from our team can help you with it."},
			{"de", "Wegen seiner Währung konnten wir diesen Betrag nicht mit unseren Limits abgleichen, daher wurde nichts gesendet. Eine Person aus unserem Team kann Ihnen dabei helfen."},
			{"ar", "لم نتمكن من مقارنة هذا المبلغ بحدودنا بسبب عملته، لذلك لم يُرسَل شيء. يمكن لأحد أعضاء فريقنا مساعدتك في ذلك."},
		} {
			c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: locale.CookieName, Value: tc.tag, Path: "/"}})
			page := c.Get("/requests/" + inv.ID)
			if got := webtest.TextByTestID(page, t, "status-detail"); got != tc.detail {
				t.Errorf("%s, %s: the page says %q, want %q", reason, tc.tag, got, tc.detail)
			}
		}
	}
}
