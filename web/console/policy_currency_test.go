package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/web/webtest"
)

// TestPolicyPageSetsTheLimitCurrency: the policy form shows the currency
// its amounts are in (US dollars for a policy written before it had
// one); a code that is not ISO 4217 is a field error (422, in the
// summary, nothing changed); a manager sets euros, the list writes the
// limits in euros, the form shows EUR, and the audit event has the
// currency before and after. A dollar refund then reaches the agents with
// the reason on its card, which writes the limits in euros and asks two
// approvers, since its amount is compared with none of them.
func TestPolicyPageSetsTheLimitCurrency(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	ctx := context.Background()
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	path := "/policies/shop/issue_refund"
	if got := c.Get(path).Doc(t).Find(`input#currency`).AttrOr("value", ""); got != "USD" {
		t.Fatalf("the form states the limits in %q, want USD", got)
	}

	v := webtest.PolicyForm(b, c.CSRF(path), "1", "3", "Euro limits.", "save")
	v.Set("currency", "EURO")
	res := c.Post(path, v)
	doc := res.Doc(t)
	if got := doc.Find(`[data-testid="currency-error"]`).Text(); res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(got, "ISO 4217") {
		t.Fatalf("limits in EURO: %d %q, want 422 naming ISO 4217", res.StatusCode, got)
	}
	if ids := webtest.ErrorSummary(t, doc); strings.Join(ids, " ") != "currency" {
		t.Errorf("the summary links to %v, want [currency]", ids)
	}
	if p, _ := b.Control.Policy(ctx, "shop", "issue_refund"); p.Version != 1 || p.Currency() != "USD" {
		t.Fatalf("a refused save changed the policy: v%d in %s", p.Version, p.Currency())
	}

	v = webtest.PolicyForm(b, c.CSRF(path), "1", "3", "The shop refunds in euros.", "save")
	v.Set("currency", "eur")
	if res := c.Post(path, v); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving euro limits: %d\n%s", res.StatusCode, res.Text)
	}
	if p, err := b.Control.Policy(ctx, "shop", "issue_refund"); err != nil || p.LimitCurrency != "EUR" || p.Version != 2 {
		t.Fatalf("the policy after saving: v%d limits in %q, %v", p.Version, p.LimitCurrency, err)
	}
	row := webtest.Squash(c.Get("/policies").Doc(t).Find(`[data-testid="policy-shop-issue_refund"]`).Text())
	if !strings.Contains(row, "automatic up to €25.00") || !strings.Contains(row, "two approvers above €500.00") {
		t.Errorf("the list row writes the limits as %q, want them in euros", row)
	}
	if got := c.Get(path).Doc(t).Find(`input#currency`).AttrOr("value", ""); got != "EUR" {
		t.Errorf("the form states the limits in %q after saving, want EUR", got)
	}
	var before, after string
	if err := b.Store.Pool().QueryRow(ctx, `SELECT data #>> '{before,limit_currency}', data #>> '{after,limit_currency}'
		FROM events WHERE action = 'policy.changed'`).Scan(&before, &after); err != nil || before != "USD" || after != "EUR" {
		t.Errorf("the audit's limit currency: before %q after %q (%v)", before, after, err)
	}

	f := webtest.NewShopper(t, b)
	inv := f.Refund(t, f.Order, 1000)
	const why = "It moves USD; this action's limits are in EUR, so a person decides."
	if inv.RouteReason != why {
		t.Fatalf("the dollar refund's route reason: %q, want %q", inv.RouteReason, why)
	}
	agent := b.Client(t)
	agent.MustSignIn(b.Users[accounts.Agent])
	if res := agent.Post("/queue/"+inv.ID+"/claim", url.Values{"_csrf": {agent.CSRF("/queue")}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("claim: %d", res.StatusCode)
	}
	card := agent.Get("/queue/" + inv.ID).Doc(t)
	if got := webtest.Squash(card.Find(`[data-testid="route-reason"]`).Text()); !strings.Contains(got, why) {
		t.Errorf("the card says %q, want the reason %q", got, why)
	}
	if got := webtest.Squash(card.Text()); !strings.Contains(got, "Two different approvers above €500.00.") {
		t.Errorf("the card does not write the second-approver limit in euros: %q", got)
	}
	if card.Find(`[data-testid="second-approver"]`).Length() == 0 {
		t.Error("the card of an amount compared with no limit does not ask two approvers")
	}
	if st := b.InvocationState(t, inv.ID); st != controlplane.AwaitingApproval {
		t.Errorf("the refund is %s", st)
	}
}
