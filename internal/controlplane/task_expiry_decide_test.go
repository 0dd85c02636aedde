package controlplane_test

import (
	"fmt"
	"testing"
	"time"

	"countersign/internal/controlplane"
)

// expiringTask is a task of the test customer that expires in ttl, well
// before its requests' own deadlines.
func (b *testBundle) expiringTask(actions []string, ttl time.Duration) controlplane.Task {
	b.t.Helper()
	task, err := b.cp.CreateTask(b.ctx, b.assistant, controlplane.NewTask{CustomerRef: b.customer.Email,
		ConversationID: fmt.Sprintf("conv-%d", time.Now().UnixNano()), AllowedActions: actions,
		WriteBudget: 5, InflightLimit: 1, RatePerMinute: 60, ExpiresAt: b.clock.Now().Add(ttl)})
	if err != nil {
		b.t.Fatal(err)
	}
	return task
}

// wantEndedTaskExpired checks that inv, the result of a yes given after its
// task expired, is not_dispatched (task_expired), that nothing recorded the
// yes (no event named yes), that its not-dispatched event says why, and
// that the dispatcher sends nothing for it.
func (b *testBundle) wantEndedTaskExpired(task controlplane.Task, inv controlplane.Invocation, yes controlplane.EventAction) {
	b.t.Helper()
	if inv.State != controlplane.NotDispatched || inv.NotDispatchedReason != controlplane.ReasonTaskExpired || inv.ApprovedAt != nil {
		b.t.Fatalf("the decision's result: %s (%s), approved at %v; want not_dispatched (task_expired), never approved",
			inv.State, inv.NotDispatchedReason, inv.ApprovedAt)
	}
	if r := inv.Reason(); r == nil || r.Code != string(controlplane.ReasonTaskExpired) {
		b.t.Errorf("reason %+v, want task_expired", r)
	}
	b.dispatchAll()
	got := b.wantState(inv.ID, controlplane.NotDispatched)
	if got.NotDispatchedReason != controlplane.ReasonTaskExpired {
		b.t.Errorf("stored reason %q, want task_expired", got.NotDispatchedReason)
	}
	events, err := b.cp.Timeline(b.ctx, task.ID)
	if err != nil {
		b.t.Fatal(err)
	}
	ended := 0
	for _, e := range events {
		if e.InvocationID != inv.ID {
			continue
		}
		switch e.Action {
		case yes, controlplane.EventInvocationApproved, controlplane.EventInvocationFirstApproval, controlplane.EventPermitGranted:
			b.t.Errorf("event %s recorded for a request whose task had expired", e.Action)
		case controlplane.EventInvocationNotDispatched:
			ended++
			if e.Data["reason"] != string(controlplane.ReasonTaskExpired) {
				b.t.Errorf("%s data %v, want reason task_expired", e.Action, e.Data)
			}
		}
	}
	if ended != 1 {
		b.t.Errorf("%d %s events, want 1", ended, controlplane.EventInvocationNotDispatched)
	}
	if effects := b.effects(""); len(effects) != 0 {
		b.t.Errorf("the shop received %d writes, want none: %+v", len(effects), effects)
	}
}

// TestConfirmAfterTaskExpiredEndsItTaskExpired: a stage-4 request whose
// task expires before its own deadline is not confirmed by the customer's
// yes (CustomerDecide, on either of two requests): the decision ends it
// not_dispatched (task_expired), records no confirmation and sends
// nothing.
func TestConfirmAfterTaskExpiredEndsItTaskExpired(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.expiringTask([]string{"issue_refund"}, 2*time.Minute)
	onPage := b.propose(task, "issue_refund", refund(b.order(3).ID, 1, "damaged"), "")
	viaConfirm := b.propose(task, "issue_refund", refund(b.order(4).ID, 2, "damaged"), "")
	for _, inv := range []controlplane.Invocation{onPage, viaConfirm} {
		if inv.State != controlplane.AwaitingConfirmation {
			t.Fatalf("stage 4 routed to %s", inv.State)
		}
	}
	b.clock.Advance(3 * time.Minute) // the task expired; the requests' deadlines have not passed
	if !b.clock.Now().Before(*onPage.DeadlineAt) {
		t.Fatal("the request's own deadline passed; the test wants only the task expired")
	}

	customer := controlplane.CustomerActor(b.customer.Email, controlplane.ProofAccount)
	d, err := customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: customer, InvocationID: onPage.ID, Verb: controlplane.CustomerConfirm})
	if err != nil {
		t.Fatalf("the customer's confirmation on the page: %v", err)
	}
	if d.Requoted {
		t.Fatalf("the confirmation was re-quoted: %+v", d)
	}
	b.wantEndedTaskExpired(task, d.Invocation, controlplane.EventInvocationConfirmed)

	d, err = customerConfirm(b.ctx, b.cp, customer, viaConfirm.ID)
	if err != nil || d.Requoted {
		t.Fatalf("the customer's second confirmation: %+v, %v", d, err)
	}
	b.wantEndedTaskExpired(task, d.Invocation, controlplane.EventInvocationConfirmed)
}

// TestApproveAfterTaskExpiredEndsItTaskExpired: an agent's approval of a
// stage-3 card whose task expired ends it not_dispatched (task_expired),
// records no approval and sends nothing.
func TestApproveAfterTaskExpiredEndsItTaskExpired(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StagePropose)
	task := b.expiringTask([]string{"issue_refund"}, 2*time.Minute)
	card := b.propose(task, "issue_refund", refund(b.order(3).ID, 1, "damaged"), "")
	if card.State != controlplane.AwaitingApproval {
		t.Fatalf("stage 3 routed to %s", card.State)
	}
	b.clock.Advance(3 * time.Minute)

	inv, err := staffApprove(b.ctx, b.cp, b.agent, card.ID, card.Version)
	if err != nil {
		t.Fatalf("the agent's approval: %v", err)
	}
	b.wantEndedTaskExpired(task, inv, controlplane.EventInvocationApproved)
}
