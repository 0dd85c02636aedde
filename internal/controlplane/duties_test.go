package controlplane_test

import (
	"encoding/json"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

func TestEditRequotesAndApprovalBindsTheEditedHash(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	order := b.order(4)
	inv := b.propose(task, "issue_refund", refund(order.ID, 4200, "damaged"), "Refund $42.00")
	if inv.State != controlplane.AwaitingApproval {
		t.Fatalf("state %s, want awaiting approval", inv.State)
	}
	edited, err := invocationOf(b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffEdit, Version: inv.Version, Args: mustJSON(t, refund(order.ID, 800, "damaged"))}))
	if err != nil {
		t.Fatal(err)
	}
	if edited.State != controlplane.AwaitingApproval || edited.Quote.AmountCents == nil || *edited.Quote.AmountCents != 800 {
		t.Fatalf("after edit: %s amount %v, want pending with a new quote of 800", edited.State, edited.Quote.AmountCents)
	}
	if string(edited.Args.Proposed) == string(edited.Args.Approved) {
		t.Fatalf("proposed arguments were overwritten: %s", edited.Args.Proposed)
	}
	before, err := b.cp.ProposedQuote(b.ctx, edited)
	if err != nil || before.AmountCents == nil || *before.AmountCents != 4200 {
		t.Fatalf("proposed quote = %v, %v; want the 4200 quote", before.AmountCents, err)
	}
	// An approval naming the proposal's hash (what another screen showed)
	// is refused: the arguments changed after it was reviewed.
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent2, InvocationID: inv.ID, Verb: controlplane.StaffApprove, Version: 0, ArgsHash: inv.ArgsHash}); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("approving a stale hash: %v, want conflict", err)
	}
	// A second edit after the first agent reviewed it makes their approval stale too.
	again, err := invocationOf(b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent2, InvocationID: inv.ID, Verb: controlplane.StaffEdit, Version: 0, Args: mustJSON(t, refund(order.ID, 900, "damaged"))}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffApprove, Version: 0, ArgsHash: edited.ArgsHash}); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("approving the first edit after a second: %v, want conflict", err)
	}
	approved, err := invocationOf(b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffApprove, Version: again.Version, ArgsHash: again.ArgsHash}))
	if err != nil {
		t.Fatal(err)
	}
	if approved.State != controlplane.Approved || string(approved.Args.Approved) != string(again.Args.Approved) {
		t.Fatalf("approved %s with %s", approved.State, approved.Args.Approved)
	}
	b.dispatchAll()
	done := b.wantState(inv.ID, controlplane.Completed)
	var eff map[string]any
	if err := json.Unmarshal(done.Args.Effective, &eff); err != nil || eff["amount_cents"] != float64(900) {
		t.Fatalf("effective arguments %s, want the edited amount 900", done.Args.Effective)
	}
}

func TestEditCannotChangeTheTarget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(4).ID, 500, "damaged"), "")
	_, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffEdit, Version: inv.Version, Args: mustJSON(t, refund(b.order(3).ID, 500, "damaged"))})
	if !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("edit to another order: %v, want invalid", err)
	}
}

func TestSecondApproverAboveThePolicyAmount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET second_approver_above_cents = 1000 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	// Below the amount one approver is enough. (It comes first: what is
	// pending or moved on the customer counts towards the amount, so after
	// the $42.00 below even $5.00 would need two.)
	small := b.propose(task, "issue_refund", refund(b.order(5).ID, 500, "damaged"), "")
	if got, err := staffApprove(b.ctx, b.cp, b.agent, small.ID, small.Version); err != nil || got.State != controlplane.Approved {
		t.Fatalf("below the amount one approver is enough: %v %v", got.State, err)
	}
	inv := b.propose(task, "issue_refund", refund(b.order(4).ID, 4200, "damaged"), "")
	first, err := staffApprove(b.ctx, b.cp, b.agent, inv.ID, inv.Version)
	if err != nil {
		t.Fatal(err)
	}
	if first.State != controlplane.AwaitingApproval || first.Version == inv.Version {
		t.Fatalf("after first approval: %s v%d, want still pending at a new version", first.State, first.Version)
	}
	if _, err := staffApprove(b.ctx, b.cp, b.agent, inv.ID, first.Version); !apperr.Is(err, apperr.Forbidden) {
		t.Fatalf("same person approving twice: %v, want forbidden", err)
	}
	second, err := staffApprove(b.ctx, b.cp, b.agent2, inv.ID, first.Version)
	if err != nil {
		t.Fatal(err)
	}
	if second.State != controlplane.Approved {
		t.Fatalf("after second approver: %s", second.State)
	}
}

func TestApproverCannotApproveReversalOfOwnApproval(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub, err := b.shop.CreateSubscription(b.ctx, demoshop.SubscriptionFixture{CustomerID: b.customer.ID, Plan: "Pro"})
	if err != nil {
		t.Fatal(err)
	}
	task := b.task([]string{"cancel_subscription"}, 10, 2, 60)
	cancel := b.propose(task, "cancel_subscription", map[string]any{"subscription_id": sub.ID, "reason_code": "switching", "effective": "end_of_period"}, "")
	if _, err := staffApprove(b.ctx, b.cp, b.agent, cancel.ID, cancel.Version); err != nil {
		t.Fatal(err)
	}
	b.dispatchAll()
	b.wantState(cancel.ID, controlplane.Completed)
	rev, err := b.cp.Reverse(b.ctx, b.agent, cancel.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := staffApprove(b.ctx, b.cp, b.agent, rev.ID, rev.Version); !apperr.Is(err, apperr.Forbidden) {
		t.Fatalf("approving the reversal of one's own approval: %v, want forbidden", err)
	}
	if _, err := staffApprove(b.ctx, b.cp, b.agent2, rev.ID, rev.Version); err != nil {
		t.Fatalf("a colleague approves the reversal: %v", err)
	}
}

func TestSendBackIsADecisionTheAssistantReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(4).ID, 500, "damaged"), "")
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.assistant, InvocationID: inv.ID, Verb: controlplane.StaffSendBack, Version: inv.Version, Reason: "why?"}); !apperr.Is(err, apperr.Forbidden) {
		t.Fatalf("assistant sending back: %v", err)
	}
	got, err := invocationOf(b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffSendBack, Version: inv.Version, Reason: "Was the lamp or the bulb damaged?"}))
	if err != nil {
		t.Fatal(err)
	}
	q, ok := controlplane.IsQuestion(got.DecisionReason)
	if got.State != controlplane.Rejected || !ok || q != "Was the lamp or the bulb damaged?" {
		t.Fatalf("sent back: %s %q", got.State, got.DecisionReason)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
