package controlplane_test

import (
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// TestReverseKeepsOneLiveCompensation: reversing the same completed
// request again, after the dedup window, returns the compensation already
// proposed; once that one is rejected a new one may be proposed.
func TestReverseKeepsOneLiveCompensation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub, err := b.shop.CreateSubscription(b.ctx, demoshop.SubscriptionFixture{CustomerID: b.customer.ID, Plan: "Pro"})
	if err != nil {
		t.Fatal(err)
	}
	task := b.task([]string{"cancel_subscription"}, 10, 2, 60)
	cancel := b.approved(task, "cancel_subscription", map[string]any{"subscription_id": sub.ID, "reason_code": "switching", "effective": "end_of_period"})
	b.dispatchAll()
	b.wantState(cancel.ID, controlplane.Completed)

	first, err := b.cp.Reverse(b.ctx, b.assistant, cancel.ID)
	if err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(11 * time.Minute)
	second, err := b.cp.Reverse(b.ctx, b.agent, cancel.ID)
	if err != nil {
		t.Fatal(err)
	}
	if second.ID != first.ID || !second.Deduplicated {
		t.Fatalf("second reverse after 11 minutes: %s (deduplicated %t), want %s", second.ID, second.Deduplicated, first.ID)
	}
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent2, InvocationID: first.ID, Verb: controlplane.StaffReject, Version: 0, Reason: controlplane.OtherReason, Other: "The customer changed their mind again."}); err != nil {
		t.Fatal(err)
	}
	third, err := b.cp.Reverse(b.ctx, b.agent, cancel.ID)
	if err != nil {
		t.Fatal(err)
	}
	if third.ID == first.ID || third.Deduplicated || third.CompensatesID != cancel.ID {
		t.Errorf("reverse after the first compensation was rejected: %s (deduplicated %t)", third.ID, third.Deduplicated)
	}
}

// TestReverseNeedsACompensationThatRunsFromTheTarget: a reinstatement's
// declared compensation (cancel_subscription) needs a reason and a timing
// Reverse cannot know: 422 no_compensation with a hint, nothing proposed.
func TestReverseNeedsACompensationThatRunsFromTheTarget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for action, want := range map[[2]string]bool{
		{"shop", "cancel_subscription"}: true, {"shop", "reinstate_subscription"}: false, {"shop", "issue_refund"}: false,
		{"shop", "update_product_description"}: false, {"shop", "change_shipping_address"}: false, {"shop", "resend_receipt"}: false,
	} {
		_, err := b.cp.Compensation(action[0], action[1])
		if got := err == nil; got != want {
			t.Errorf("%s: compensation %t (%v), want %t", action[1], got, err, want)
		}
		if e, ok := apperr.As(err); err != nil && (!ok || e.Kind != apperr.Invalid || e.Code != "no_compensation" || e.Hint == "") {
			t.Errorf("%s: %v, want invalid no_compensation with a hint", action[1], err)
		}
	}
}

// TestStageFiveMoneyNeedsACeiling: a money action cannot be saved on stage
// 5 without an automatic ceiling, and a row that has none anyway (written
// before this rule, or by hand) routes refunds to an agent.
func TestStageFiveMoneyNeedsACeiling(t *testing.T) {
	t.Parallel()
	b := setup(t)
	manager := controlplane.UserActor(b.owner, "manager", "Priya Owner")
	current, err := b.cp.Policy(b.ctx, "shop", "issue_refund")
	if err != nil {
		t.Fatal(err)
	}
	draft := current
	draft.Stage, draft.AutoMaxCents = controlplane.StageAutonomous, nil
	_, err = b.cp.ChangePolicy(b.ctx, manager, draft, current.Version, "everything automatic")
	if e, ok := apperr.As(err); !ok || e.Kind != apperr.Invalid || e.Fields["auto_max"] == "" {
		t.Fatalf("stage 5 refunds without a ceiling: %v, want invalid naming auto_max", err)
	}
	receipts, err := b.cp.Policy(b.ctx, "shop", "resend_receipt")
	if err != nil {
		t.Fatal(err)
	}
	receipts.AutoMaxCents = nil
	if _, err := b.cp.ChangePolicy(b.ctx, manager, receipts, receipts.Version, "receipts move no money"); err != nil {
		t.Errorf("stage 5 without a ceiling for an action without an amount: %v", err)
	}

	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET stage = 5, auto_max_cents = NULL, version = version + 1
		WHERE system = 'shop' AND action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(2).ID, 100, "wrong_item"), "")
	if inv.State != controlplane.AwaitingApproval {
		t.Errorf("a $1.00 refund under stage 5 without a ceiling is %s (%s), want awaiting approval", inv.State, inv.RouteReason)
	}
}
