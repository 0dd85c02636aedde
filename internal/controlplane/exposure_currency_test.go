package controlplane_test

import (
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// orderIn is a delivered order of the bundle's customer in currency, one
// item of 400.00 in its main unit (40000 minor units; 40,000 yen).
func (b *testBundle) orderIn(currency string) demoshop.Order {
	b.t.Helper()
	at := b.clock.Now().AddDate(0, 0, -3)
	o, err := b.shop.CreateOrder(b.ctx, demoshop.OrderFixture{CustomerID: b.customer.ID, DeliveredAt: &at, Currency: currency,
		Items: []demoshop.ItemFixture{{Name: "Oak table", UnitPriceCents: 40000, Quantity: 1}}})
	if err != nil {
		b.t.Fatal(err)
	}
	return o
}

// TestExposureComparesOneCurrency: a policy's limits are in US dollars.
// A refund in euros or yen under them is refused naming the currency
// field and the fix, never compared as if it were cents of dollars; with
// no limits it is recorded, and what moved in dollars is not added to it;
// once euros are pending on the customer, a dollar request under limits
// is refused too, so no split across currencies passes under a limit; the
// policy's what-if sums dollars only.
func TestExposureComparesOneCurrency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.taskIn(b.assistant, "conv-currencies", []string{"issue_refund"}, 10, 60)

	dollars := b.propose(task, "issue_refund", refund(b.orderIn("usd").ID, 10000, "damaged"), "")
	if dollars.State != controlplane.AwaitingConfirmation {
		t.Fatalf("$100.00 routed to %s (%s)", dollars.State, dollars.RouteReason)
	}
	for _, cur := range []string{"eur", "jpy"} {
		_, err := b.tryPropose(task, "issue_refund", refund(b.orderIn(cur).ID, 15000, "damaged"), "")
		ae, ok := apperr.As(err)
		if !ok || ae.Code != controlplane.CodeCurrencyNotLimited || !strings.Contains(ae.Fields["currency"], "the policy's limits are in USD") {
			t.Fatalf("a refund in %s under dollar limits: %v, want %s naming the currency field", cur, err, controlplane.CodeCurrencyNotLimited)
		}
	}

	// Without amount limits a euro refund is recorded, and the $100.00
	// pending is not added to it.
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET auto_max_cents = NULL, approval_above_cents = NULL,
		second_approver_above_cents = NULL, step_up_above_cents = NULL, version = version + 1 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	euros := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 15000, "damaged"), "")
	if euros.ExposureCents != 0 {
		t.Errorf("the euro refund counted %d of prior exposure: the dollars were added to euros", euros.ExposureCents)
	}

	// With limits again, euros pending: a dollar request is refused.
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET approval_above_cents = 20000, version = version + 1
		WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	// The policy's what-if counts the euros apart, in none of its sums.
	p, err := b.cp.Policy(b.ctx, "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.cp.PolicyWhatIf(b.ctx, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.OtherCurrency != 1 || w.Refused != 1 || w.RefusedCents+w.AutoCents+w.ApprovalCents+w.ConfirmationCents != 10000 {
		t.Errorf("what-if with $100.00 and €150.00 proposed: %+v, want the euros counted apart and only $100.00 summed", w)
	}
	_, err = b.tryPropose(task, "issue_refund", refund(b.orderIn("usd").ID, 5000, "damaged"), "")
	ae, ok := apperr.As(err)
	if !ok || ae.Code != controlplane.CodeMixedCurrencyExposure || ae.Kind != apperr.Conflict ||
		!strings.Contains(ae.Fields["currency"], "is USD, and EUR already moved or is pending") {
		t.Errorf("a dollar refund with euros pending on the customer: %v, want %s", err, controlplane.CodeMixedCurrencyExposure)
	}
}

// TestAConfirmationRefusedForMixedCurrenciesSaysSo: a customer confirming
// a dollar request when euros were proposed before it, and amount limits
// came into force since, is refused with mixed_currency_exposure, not
// told, as for a request decided meanwhile, that nothing was left to
// decide; the request still awaits them.
func TestAConfirmationRefusedForMixedCurrenciesSaysSo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.taskIn(b.assistant, "conv-mixed-confirm", []string{"issue_refund"}, 10, 60)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET auto_max_cents = NULL, approval_above_cents = NULL,
		second_approver_above_cents = NULL, step_up_above_cents = NULL, version = version + 1 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 15000, "damaged"), "")
	dollars := b.propose(task, "issue_refund", refund(b.orderIn("usd").ID, 5000, "damaged"), "")
	if dollars.State != controlplane.AwaitingConfirmation {
		t.Fatalf("$50.00 routed to %s", dollars.State)
	}
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET approval_above_cents = 20000, version = version + 1
		WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	d, err := controlplane.CustomerDecision{Actor: controlplane.CustomerProvedOn(b.customer.Email, "link", dollars.ID),
		InvocationID: dollars.ID, Verb: controlplane.CustomerConfirm}.Showing(dollars)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.cp.CustomerDecide(b.ctx, d)
	if e, ok := apperr.As(err); !ok || e.Code != controlplane.CodeMixedCurrencyExposure {
		t.Errorf("the confirmation: done %v, %s, %v; want refused with %s", got.Done, got.Invocation.State, err, controlplane.CodeMixedCurrencyExposure)
	}
	if st := b.get(dollars.ID).State; st != controlplane.AwaitingConfirmation {
		t.Errorf("after the refused confirmation the request is %s, want still awaiting its customer", st)
	}
}

// TestARequestRefusedForItsCurrencyAtThePermitIsNotDispatched: requests
// confirmed while the policy had no amount limits, then limits come into
// force: at the permit a euro request (limits in dollars) and a dollar
// request (euros moved on the customer) end not_dispatched, once each,
// with their reason recorded and said in words, not an error every
// dispatch attempt meets again; nothing reaches the shop.
func TestARequestRefusedForItsCurrencyAtThePermitIsNotDispatched(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.taskIn(b.assistant, "conv-currency-permit", []string{"issue_refund"}, 10, 60)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET auto_max_cents = NULL, approval_above_cents = NULL,
		second_approver_above_cents = NULL, step_up_above_cents = NULL, version = version + 1 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	confirmed := func(order demoshop.Order, cents int64) controlplane.Invocation {
		t.Helper()
		inv := b.propose(task, "issue_refund", refund(order.ID, cents, "damaged"), "")
		d, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "link", inv.ID), inv.ID)
		if err != nil || d.Invocation.State != controlplane.Approved {
			t.Fatalf("confirming %s: %s, %v", inv.ID, d.Invocation.State, err)
		}
		return d.Invocation
	}
	moved := confirmed(b.orderIn("eur"), 15000)
	b.dispatchAll()
	b.wantState(moved.ID, controlplane.Completed)
	euros := confirmed(b.orderIn("eur"), 10000)
	dollars := confirmed(b.orderIn("usd"), 5000)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET approval_above_cents = 20000, version = version + 1
		WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}

	for range 2 {
		for _, id := range []string{euros.ID, dollars.ID} {
			if sent, err := b.cp.Dispatch(b.ctx, id); sent || err != nil {
				t.Fatalf("dispatching %s: sent %v, %v; want refused its permit without an error", id, sent, err)
			}
		}
	}
	events, err := b.cp.Timeline(b.ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		inv  controlplane.Invocation
		want controlplane.NotDispatchedReason
	}{{euros, controlplane.ReasonCurrencyNotLimited}, {dollars, controlplane.ReasonMixedCurrency}} {
		got := b.wantState(c.inv.ID, controlplane.NotDispatched)
		if got.NotDispatchedReason != c.want {
			t.Errorf("%s not dispatched for %q, want %s", c.inv.ID, got.NotDispatchedReason, c.want)
		}
		r := got.Reason()
		if r == nil || r.Code != string(c.want) || r.Message == string(c.want) || !strings.Contains(r.Message, "currenc") ||
			!strings.Contains(got.Say(adapter.ActionSpec{}), r.Message) {
			t.Errorf("%s: reason %+v, says %q; want %s said in words, naming the currency", c.inv.ID, r, got.Say(adapter.ActionSpec{}), c.want)
		}
		n := 0
		for _, e := range events {
			if e.InvocationID == c.inv.ID && e.Action == controlplane.EventInvocationNotDispatched {
				n++
				if e.Data["reason"] != string(c.want) {
					t.Errorf("%s: not-dispatched event with reason %v, want %s", c.inv.ID, e.Data["reason"], c.want)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: %d not-dispatched events, want 1", c.inv.ID, n)
		}
		if fx := b.effects(got.IdempotencyKey); len(fx) != 0 {
			t.Errorf("%s reached the shop: %d effects", c.inv.ID, len(fx))
		}
	}
}
