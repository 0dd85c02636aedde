package controlplane_test

import (
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/store/dbtest"
)

func TestProposeRoutesByStageAndDispatchesOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub, err := b.shop.CreateSubscription(b.ctx, demoshop.SubscriptionFixture{CustomerID: b.customer.ID, Plan: "Pro"})
	if err != nil {
		t.Fatal(err)
	}
	task := b.task([]string{"issue_refund", "change_shipping_address", "update_product_description", "cancel_subscription"}, 10, 2, 60)
	o := b.order(5)

	// Stage 3: an agent approves.
	inv := b.propose(task, "issue_refund", refund(o.ID, 4200, "damaged"), "Refund $42.00 for the damaged lamp")
	if inv.State != controlplane.AwaitingApproval || inv.Quote.AmountCents == nil || *inv.Quote.AmountCents != 4200 {
		t.Fatalf("refund routed to %s with quote %+v", inv.State, inv.Quote)
	}
	if inv.SummaryDisagrees {
		t.Errorf("matching summary flagged as disagreeing")
	}
	if got := inv.Say(adapter.ActionSpec{}); got == "" || inv.State.Terminal() {
		t.Errorf("say = %q", got)
	}
	b.dispatchAll()
	b.wantState(inv.ID, controlplane.AwaitingApproval) // nothing leaves before approval
	inv, err = staffApprove(b.ctx, b.cp, b.agent, inv.ID, inv.Version)
	if err != nil {
		t.Fatal(err)
	}
	if inv.State != controlplane.Approved || inv.Say(adapter.ActionSpec{}) == "" {
		t.Fatalf("after approve: %s", inv.State)
	}
	b.dispatchAll()
	done := b.wantState(inv.ID, controlplane.Completed)
	if done.Result == nil || done.Result.Reference == "" || done.Verification == nil || !done.Verification.Verified {
		t.Errorf("completed without reference or verification: %+v %+v", done.Result, done.Verification)
	}
	if n := len(b.effects(inv.IdempotencyKey)); n != 1 {
		t.Errorf("shop ledger has %d effects for the key, want 1", n)
	}

	// Stage 4: the customer confirms.
	b.setStage("cancel_subscription", controlplane.StageAssisted)
	c := b.propose(task, "cancel_subscription", map[string]any{"subscription_id": sub.ID, "reason_code": "too_expensive", "effective": "end_of_period"}, "")
	if c.State != controlplane.AwaitingConfirmation {
		t.Fatalf("stage 4 routed to %s", c.State)
	}
	if _, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn("someone-else@example.test", "code", c.ID), c.ID); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("another customer confirming: %v, want not found", err)
	}
	for _, who := range []controlplane.Actor{controlplane.CustomerActor(b.customer.Email, ""),
		controlplane.AssistantActor("asst_1", "Assistant")} {
		if _, err := customerConfirm(b.ctx, b.cp, who, c.ID); !apperr.Is(err, apperr.Forbidden) {
			t.Errorf("confirming as %s without the customer's proof: %v, want forbidden", who.Kind, err)
		}
	}
	if _, err := staffApprove(b.ctx, b.cp, b.agent, c.ID, 0); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("agent approving a stage-4 confirmation: %v, want illegal transition", err)
	}
	if d, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", c.ID), c.ID); err != nil || !d.Done {
		t.Fatalf("the customer confirming: %+v, %v", d, err)
	}
	b.dispatchAll()
	b.wantState(c.ID, controlplane.Completed)

	// Stage 5 within limits: approved by the policy, the event names it and its owner.
	b.setStage("update_product_description", controlplane.StageAutonomous)
	p := b.product()
	auto := b.propose(task, "update_product_description", map[string]any{"product_id": p.ID, "description": "Warm light."}, "")
	if auto.State != controlplane.Approved {
		t.Fatalf("stage 5 routed to %s (%s)", auto.State, auto.RouteReason)
	}
	events, err := b.cp.Timeline(b.ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var named bool
	for _, e := range events {
		if e.InvocationID == auto.ID && e.Action == "invocation.approved" && e.ActorKind == controlplane.ActorPolicy &&
			e.Data["owner_name"] == "Priya Owner" {
			named = true
		}
	}
	if !named {
		t.Errorf("stage-5 approval event does not name the policy and its owner: %+v", events)
	}
	b.dispatchAll()
	b.wantState(auto.ID, controlplane.Completed)
}

func TestDedupWindow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	o := b.order(3)
	first := b.propose(task, "issue_refund", refund(o.ID, 500, "wrong_item"), "")
	again := b.propose(task, "issue_refund", refund(o.ID, 500, "wrong_item"), "")
	if again.ID != first.ID || !again.Deduplicated {
		t.Fatalf("same refund within the window: %s (dedup %v), want %s deduplicated", again.ID, again.Deduplicated, first.ID)
	}
	other := b.propose(task, "issue_refund", refund(o.ID, 600, "wrong_item"), "")
	if other.ID == first.ID {
		t.Fatalf("different amount deduplicated")
	}
	b.clock.Advance(10*time.Minute + time.Second)
	later := b.propose(task, "issue_refund", refund(o.ID, 500, "wrong_item"), "")
	if later.ID == first.ID || later.Deduplicated || later.IdempotencyKey == first.IdempotencyKey {
		t.Fatalf("after the window: same invocation or key (%s, %s)", later.ID, later.IdempotencyKey)
	}
}

func TestSummaryDisagreementIsRecordedAndQuoteWins(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	o := b.order(3)
	inv := b.propose(task, "issue_refund", refund(o.ID, 4200, "damaged"), "I'll refund $50.00 for the lamp")
	if !inv.SummaryDisagrees || *inv.Quote.AmountCents != 4200 {
		t.Fatalf("disagrees=%v amount=%v", inv.SummaryDisagrees, *inv.Quote.AmountCents)
	}
	n, err := dbtest.CountEvents(b.ctx, b.store.Pool(), "invocation.summary_disagreed", &task.ID)
	if err != nil || n != 1 {
		t.Errorf("disagreement events = %d, %v", n, err)
	}
}

func TestIllegalAndStaleTransitionsAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(3).ID, 100, "wrong_item"), "")

	if _, err := staffApprove(b.ctx, b.cp, b.agent, inv.ID, inv.Version+1); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("approve with a stale version: %v, want conflict", err)
	}
	if _, err := staffApprove(b.ctx, b.cp, b.assistant, inv.ID, inv.Version); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("assistant approving: %v, want forbidden", err)
	}
	// The customer's door decides nothing on what awaits an agent.
	if d, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID), inv.ID); err != nil || d.Done ||
		b.get(inv.ID).State != controlplane.AwaitingApproval {
		t.Errorf("confirming a stage-3 proposal: %+v, %v, want nothing decided", d, err)
	}
	approved, err := staffApprove(b.ctx, b.cp, b.agent, inv.ID, inv.Version)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := staffApprove(b.ctx, b.cp, b.agent2, inv.ID, approved.Version); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("approving twice: %v, want illegal transition", err)
	}
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffReject, Version: 0, Reason: controlplane.OtherReason, Other: "changed my mind"}); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("rejecting an approved invocation: %v, want illegal transition", err)
	}
	if _, err := b.cp.Reconcile(b.ctx, b.agent, inv.ID); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("reconciling an approved invocation: %v, want illegal transition", err)
	}
	if _, err := b.cp.ChangeTask(b.ctx, b.assistant, task.ID, controlplane.TaskResume, 0); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("resuming an active task: %v, want illegal transition", err)
	}
	if _, err := b.cp.ChangeTask(b.ctx, b.assistant, task.ID, controlplane.TaskPause, task.Version+5); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("pausing with a stale version: %v, want conflict", err)
	}
}

func TestRejectDeclineAndExpire(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("change_shipping_address", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund", "change_shipping_address"}, 10, 2, 60)
	r := b.propose(task, "issue_refund", refund(b.order(3).ID, 100, "wrong_item"), "")
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: r.ID, Verb: controlplane.StaffReject, Version: r.Version, Reason: controlplane.OtherReason, Other: ""}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("reject without a reason: %v, want invalid", err)
	}
	rejected, err := invocationOf(b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: r.ID, Verb: controlplane.StaffReject, Version: r.Version, Reason: controlplane.OtherReason, Other: "Order is under investigation"}))
	if err != nil || rejected.State != controlplane.Rejected || rejected.DecisionReason == "" {
		t.Fatalf("reject: %v %+v", err, rejected)
	}

	pending, err := b.shop.CreateOrder(b.ctx, demoshop.OrderFixture{CustomerID: b.customer.ID})
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]any{"order_id": pending.ID, "address": map[string]any{"name": "Ada Buyer", "line1": "1 New St", "city": "Berlin", "postal_code": "10115", "country": "DE"}}
	c := b.propose(task, "change_shipping_address", addr, "")
	if c.State != controlplane.AwaitingConfirmation {
		t.Fatalf("address change is %s", c.State)
	}
	declined, err := customerDecline(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", c.ID), c.ID, "wrong city")
	if err != nil || !declined.Done || declined.Invocation.State != controlplane.Rejected {
		t.Fatalf("decline: %v %+v", err, declined)
	}

	b.clock.Advance(11 * time.Minute) // outside the dedup window
	late := b.propose(task, "change_shipping_address", addr, "")
	b.clock.Advance(31 * time.Minute)
	if d, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", late.ID), late.ID); err != nil || d.Done ||
		b.get(late.ID).State != controlplane.AwaitingConfirmation {
		t.Errorf("confirming after the deadline: %+v, %v, want nothing decided", d, err)
	}
	if sw, err := b.cp.Sweep(b.ctx); err != nil || sw.Expired != 1 {
		t.Fatalf("Sweep = %+v, %v; want 1 expired", sw, err)
	}
	b.wantState(late.ID, controlplane.Expired)
}
