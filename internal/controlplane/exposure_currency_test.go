package controlplane_test

import (
	"strconv"
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

// noLimits takes every amount limit off the shop's refund policy, as a
// new version: nothing compares an amount then.
func (b *testBundle) noLimits() {
	b.t.Helper()
	b.setPolicy(`auto_max_cents = NULL, approval_above_cents = NULL, second_approver_above_cents = NULL,
		step_up_above_cents = NULL, version = version + 1`)
}

// limitsIn changes the shop's refund policy's limit currency through
// ChangePolicy, the manager's door: a new version, audited.
func (b *testBundle) limitsIn(currency string) controlplane.Policy {
	b.t.Helper()
	p, err := b.cp.Policy(b.ctx, "shop", "issue_refund")
	if err != nil {
		b.t.Fatal(err)
	}
	draft := p
	draft.LimitCurrency = currency
	changed, err := b.cp.ChangePolicy(b.ctx, controlplane.UserActor(b.owner, "manager", "Mo Manager"), draft, p.Version,
		"the shop refunds in "+currency)
	if err != nil {
		b.t.Fatal(err)
	}
	return changed
}

// wantPerson says inv awaits an agent, with a route reason naming the
// currencies at stake in plain words.
func wantPerson(t *testing.T, what string, inv controlplane.Invocation, reason string) {
	t.Helper()
	if inv.State != controlplane.AwaitingApproval || inv.RouteReason != reason {
		t.Errorf("%s: %s (%q), want awaiting an agent with %q", what, inv.State, inv.RouteReason, reason)
	}
}

const (
	eurUnderUSD = "It moves EUR; this action's limits are in USD, so a person decides."
	jpyUnderUSD = "It moves JPY; this action's limits are in USD, so a person decides."
	usdUnderEUR = "It moves USD; this action's limits are in EUR, so a person decides."
	usdWithEUR  = "It moves USD, and EUR already moved or is pending on this customer or object; amounts in different currencies are never added up, so a person decides."
	eurWithUSD  = "It moves EUR, and USD already moved or is pending on this customer or object; amounts in different currencies are never added up, so a person decides."
)

// TestARequestInAnotherCurrencyGoesToAPerson: under limits in US dollars,
// a refund in euros or yen is never compared with them as if it were
// cents of dollars: at stage 4 it goes to an agent, not to the customer,
// at stage 5 under the ceiling it does not run on its own; the reason
// says why, and the assistant reads it (route_reason) with a sentence
// that promises nothing. Without amount limits nothing is compared, and
// the euro refund routes as any other.
func TestARequestInAnotherCurrencyGoesToAPerson(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.taskIn(b.assistant, "conv-currency-person", []string{"issue_refund"}, 10, 60)
	euros := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 1000, "damaged"), "")
	wantPerson(t, "€10.00 under dollar limits at stage 4", euros, eurUnderUSD)
	if say := euros.Say(adapter.ActionSpec{}); !strings.Contains(say, "team needs to approve") {
		t.Errorf("the assistant is told %q", say)
	}
	yen := b.propose(task, "issue_refund", refund(b.orderIn("jpy").ID, 1000, "damaged"), "")
	wantPerson(t, "¥1,000 under dollar limits at stage 4", yen, jpyUnderUSD)

	b.newCustomer()
	b.setPolicy(`stage = 5, owner_id = ` + strconv.FormatInt(b.owner, 10) + `, version = version + 1`)
	task = b.taskIn(b.assistant, "conv-currency-auto", []string{"issue_refund"}, 10, 60)
	auto := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 1000, "damaged"), "")
	wantPerson(t, "€10.00 under a $25.00 ceiling at stage 5", auto, eurUnderUSD)

	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	b.noLimits()
	task = b.taskIn(b.assistant, "conv-currency-nolimits", []string{"issue_refund"}, 10, 60)
	if free := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 1000, "damaged"), ""); free.State != controlplane.AwaitingConfirmation {
		t.Errorf("€10.00 under a policy with no amount limits: %s (%q), want the customer", free.State, free.RouteReason)
	}
}

// TestEurosAndDollarsToOneCustomerAreNeverSummed: dollars and euros
// refunded to one customer are each counted in their own currency only:
// a euro refund after dollars counts no dollars as its exposure, and the
// euros then count in the next euro refund's exposure, never in a
// dollar one's; under limits, once both currencies are on the customer,
// a request in either goes to a person with the reason.
func TestEurosAndDollarsToOneCustomerAreNeverSummed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.taskIn(b.assistant, "conv-currencies", []string{"issue_refund"}, 10, 60)
	dollars := b.propose(task, "issue_refund", refund(b.orderIn("usd").ID, 15000, "damaged"), "")
	if dollars.State != controlplane.AwaitingConfirmation {
		t.Fatalf("$150.00 routed to %s (%s)", dollars.State, dollars.RouteReason)
	}
	euros := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 15000, "damaged"), "")
	wantPerson(t, "€150.00 after $150.00", euros, eurUnderUSD)
	if euros.ExposureCents != 0 {
		t.Errorf("the euro refund counted %d of prior exposure: dollars were added to euros", euros.ExposureCents)
	}
	more := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 2000, "damaged"), "")
	if more.ExposureCents != 15000 {
		t.Errorf("a second euro refund counted %d of prior exposure, want the €150.00 before it", more.ExposureCents)
	}
	usd := b.propose(task, "issue_refund", refund(b.orderIn("usd").ID, 1000, "damaged"), "")
	wantPerson(t, "$10.00 with euros pending", usd, usdWithEUR)
	if usd.ExposureCents != 15000 {
		t.Errorf("the dollar refund counted %d of prior exposure, want the $150.00 only", usd.ExposureCents)
	}

	// The policy's what-if sums the dollars only, and sends the euros to
	// a person.
	p, err := b.cp.Policy(b.ctx, "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.cp.PolicyWhatIf(b.ctx, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.OtherCurrency != 2 || w.Approval != 2 || w.ApprovalCents+w.ConfirmationCents+w.AutoCents+w.RefusedCents != 16000 {
		t.Errorf("what-if with $160.00 and €170.00 proposed: %+v, want the euros to a person and only dollars summed", w)
	}
}

// TestAEuroLimitPolicyComparesEuros: a policy whose limits a manager set
// in euros (a new, audited version) compares euro amounts with them, the
// route reason writing them in euros, and sends dollars to a person.
func TestAEuroLimitPolicyComparesEuros(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	before, err := b.cp.Policy(b.ctx, "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	p := b.limitsIn("EUR")
	if p.Currency() != "EUR" || p.Version != before.Version+1 {
		t.Fatalf("the changed policy: limits in %s at v%d, want EUR at v%d", p.Currency(), p.Version, before.Version+1)
	}
	var was, after string
	if err := b.store.Pool().QueryRow(b.ctx, `SELECT data #>> '{before,limit_currency}', data #>> '{after,limit_currency}'
		FROM events WHERE action = $1`, string(controlplane.EventPolicyChanged)).Scan(&was, &after); err != nil || was != "USD" || after != "EUR" {
		t.Errorf("the policy.changed event: limits in %q then %q, %v; want USD then EUR", was, after, err)
	}
	task := b.taskIn(b.assistant, "conv-euro-limits", []string{"issue_refund"}, 10, 60)
	small := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 15000, "damaged"), "")
	if small.State != controlplane.AwaitingConfirmation {
		t.Errorf("€150.00 under €200.00: %s (%q), want the customer", small.State, small.RouteReason)
	}
	big := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 6000, "damaged"), "")
	if big.State != controlplane.AwaitingApproval || !strings.Contains(big.RouteReason, "(€210.00 in all) is above the approval threshold of €200.00") {
		t.Errorf("€60.00 after €150.00: %s (%q), want an agent, the amounts in euros", big.State, big.RouteReason)
	}
	b.newCustomer()
	task = b.taskIn(b.assistant, "conv-euro-limits-usd", []string{"issue_refund"}, 10, 60)
	wantPerson(t, "$10.00 under euro limits", b.propose(task, "issue_refund", refund(b.orderIn("usd").ID, 1000, "damaged"), ""), usdUnderEUR)

	// The limit currency is an ISO 4217 code, said on its field.
	draft := p
	draft.LimitCurrency = "EURO"
	_, err = b.cp.ChangePolicy(b.ctx, controlplane.UserActor(b.owner, "manager", "Mo Manager"), draft, p.Version, "typo")
	if e, ok := apperr.As(err); !ok || e.Kind != apperr.Invalid || !strings.Contains(e.Fields["currency"], "ISO 4217") {
		t.Errorf("limits in EURO: %v, want the currency field refused", err)
	}
}

// TestASplitAcrossCurrenciesDoesNotWalkUnderALimit: under a $25.00
// automatic ceiling, $20.00 runs on its own; €20.00 more to the same
// customer is not compared with it but goes to a person, and so does a
// dollar refund after it. One that cannot be compared takes the strictest
// path the policy has: two different agents when it has a second-approver
// amount, and a passkey proof when it asks one above an amount.
func TestASplitAcrossCurrenciesDoesNotWalkUnderALimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newCustomer()
	b.setPolicy(`stage = 5, owner_id = ` + strconv.FormatInt(b.owner, 10) + `, version = version + 1`)
	task := b.taskIn(b.assistant, "conv-currency-split", []string{"issue_refund"}, 10, 60)
	if first := b.propose(task, "issue_refund", refund(b.orderIn("usd").ID, 2000, "damaged"), ""); first.State != controlplane.Approved &&
		first.State != controlplane.Dispatching && first.State != controlplane.Completed {
		t.Fatalf("$20.00 under a $25.00 ceiling: %s (%q)", first.State, first.RouteReason)
	}
	euros := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 2000, "damaged"), "")
	wantPerson(t, "€20.00 after $20.00", euros, eurUnderUSD)
	dollars := b.propose(task, "issue_refund", refund(b.orderIn("usd").ID, 100, "damaged"), "")
	wantPerson(t, "$1.00 after €20.00", dollars, usdWithEUR)

	// Two agents: €20.00 is far under the $500.00 second-approver amount,
	// but is not compared with it.
	got, err := staffApprove(b.ctx, b.cp, b.agent, euros.ID, euros.Version)
	if err != nil || got.State != controlplane.AwaitingApproval {
		t.Fatalf("one agent's approval of €20.00: %s, %v; want a first approval only", got.State, err)
	}
	if got, err = staffApprove(b.ctx, b.cp, b.agent2, euros.ID, got.Version); err != nil || got.State != controlplane.Approved {
		t.Errorf("the second agent's approval: %s, %v", got.State, err)
	}

	// A passkey: the policy asks one above $300.00.
	b.setPolicy(`step_up_above_cents = 30000, second_approver_above_cents = NULL, version = version + 1`)
	p, err := b.cp.Policy(b.ctx, "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	dollars = b.get(dollars.ID)
	if !b.cp.ApprovalNeedsStepUp(&p, euros) || b.cp.ApprovalNeedsStepUp(&p, dollars) {
		t.Errorf("the card asks a passkey of €20.00: %v, of $1.00: %v; want it of the euros only (the dollars' mixed currency is asked at the decision)",
			b.cp.ApprovalNeedsStepUp(&p, euros), b.cp.ApprovalNeedsStepUp(&p, dollars))
	}
	_, err = b.approveWith(b.agent, dollars, nil)
	wantStepUpCode(t, "$1.00 with euros on the customer, approved without a passkey", err, controlplane.ErrStepUpRequired.Code)
}

// TestAConfirmationOfAnAmountNoLongerComparedGoesToAPerson: a customer
// confirming a dollar request when euros were proposed before it, and
// amount limits came into force since, does not approve it: the route
// checked again sends it to an agent, with the reason.
func TestAConfirmationOfAnAmountNoLongerComparedGoesToAPerson(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.taskIn(b.assistant, "conv-mixed-confirm", []string{"issue_refund"}, 10, 60)
	b.noLimits()
	b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 15000, "damaged"), "")
	dollars := b.propose(task, "issue_refund", refund(b.orderIn("usd").ID, 5000, "damaged"), "")
	if dollars.State != controlplane.AwaitingConfirmation {
		t.Fatalf("$50.00 routed to %s", dollars.State)
	}
	b.setPolicy(`approval_above_cents = 20000, version = version + 1`)
	got, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "link", dollars.ID), dollars.ID)
	if err != nil {
		t.Fatalf("the confirmation: %v", err)
	}
	wantPerson(t, "the confirmed $50.00 with euros pending", got.Invocation, usdWithEUR)
}

// TestARequestRefusedForItsCurrencyAtThePermitIsNotDispatched: requests
// confirmed while the policy had no amount limits, then limits come into
// force: the route checked again at the permit needs a person, whom only
// the customer's yes does not cover, so a euro request (limits in
// dollars) and a dollar request (euros moved on the customer) end
// not_dispatched, once each, with their reason recorded and said in
// words; nothing reaches the shop. A euro request an agent approved is
// covered (a person decided) and is sent.
func TestARequestRefusedForItsCurrencyAtThePermitIsNotDispatched(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.newCustomer()
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.taskIn(b.assistant, "conv-currency-permit", []string{"issue_refund"}, 10, 60)
	b.noLimits()
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
	b.setStage("issue_refund", controlplane.StagePropose)
	byAgent := b.propose(task, "issue_refund", refund(b.orderIn("eur").ID, 1000, "damaged"), "")
	if _, err := staffApprove(b.ctx, b.cp, b.agent, byAgent.ID, byAgent.Version); err != nil {
		t.Fatal(err)
	}
	b.setPolicy(`approval_above_cents = 20000, version = version + 1`)

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
	if sent, err := b.cp.Dispatch(b.ctx, byAgent.ID); !sent || err != nil {
		t.Errorf("the euro request an agent approved: sent %v, %v; want sent", sent, err)
	}
}
