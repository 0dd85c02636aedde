package controlplane_test

import (
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// waitingFigures is what a task's waiting requests weigh where people and
// the routing count them: the agents' queue, the cards a person holds, the
// task list's counts, and the exposure on the customer.
type waitingFigures struct {
	queue, pending, claims, taskApproval, taskCustomer int
	exposureCents                                      int64
}

func (b *testBundle) waitingFigures(task controlplane.Task, orderID string) waitingFigures {
	b.t.Helper()
	var f waitingFigures
	var err error
	if f.queue, err = b.store.CountQueue(b.ctx, store.QueueFilter{Now: b.clock.Now()}); err != nil {
		b.t.Fatal(err)
	}
	if f.pending, _, err = b.store.CountPending(b.ctx); err != nil {
		b.t.Fatal(err)
	}
	if err := b.store.Pool().QueryRow(b.ctx, `SELECT (SELECT count(*) FROM approval_claims c JOIN invocations i ON i.id = c.invocation_id
		WHERE i.task_id = $1), awaiting_approval_count, awaiting_customer_count FROM tasks WHERE id = $1`, task.ID).
		Scan(&f.claims, &f.taskApproval, &f.taskCustomer); err != nil {
		b.t.Fatal(err)
	}
	err = b.store.InTx(b.ctx, func(tx *store.Tx) error {
		e, err := tx.Exposure(b.ctx, store.ExposureQuery{System: "shop", Action: "issue_refund", CustomerRef: task.CustomerRef,
			TargetID: orderID, Since: b.clock.Now().Add(-time.Hour), Currency: "USD"})
		f.exposureCents = e.CustomerCents
		return err
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return f
}

// TestCancelWithdrawsWaitingRequests: cancelling a task moves every request
// of it that waits for a person — the customer's confirmation, an agent's
// approval, a first approval waiting for the second approver — to not
// dispatched (task_cancelled) in the cancel's transaction, each with its
// event; they leave the queue, the task's counts, the held cards and the
// exposure, say they were withdrawn, and can no longer be decided. Pausing
// keeps them pending.
func TestCancelWithdrawsWaitingRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE policies SET second_approver_above_cents = 1000 WHERE action = 'issue_refund'`); err != nil {
		t.Fatal(err)
	}
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	o := b.order(3)
	b.setStage("issue_refund", controlplane.StageAssisted)
	confirm := b.propose(task, "issue_refund", refund(o.ID, 300, "damaged"), "")
	b.setStage("issue_refund", controlplane.StagePropose)
	approve := b.propose(task, "issue_refund", refund(o.ID, 400, "damaged"), "")
	second := b.propose(task, "issue_refund", refund(o.ID, 1500, "damaged"), "")
	first, err := staffApprove(b.ctx, b.cp, b.agent, second.ID, second.Version)
	if err != nil || first.State != controlplane.AwaitingApproval {
		t.Fatalf("first of two approvals: %+v, %v", first, err)
	}
	if _, err := b.store.ClaimCard(b.ctx, approve.ID, b.agent.UserID, b.clock.Now(), b.clock.Now().Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if confirm.State != controlplane.AwaitingConfirmation || approve.State != controlplane.AwaitingApproval {
		t.Fatalf("routed to %s and %s", confirm.State, approve.State)
	}
	waiting := []controlplane.Invocation{confirm, approve, second}
	before := b.waitingFigures(task, o.ID)
	if want := (waitingFigures{queue: 2, pending: 2, claims: 1, taskApproval: 2, taskCustomer: 1, exposureCents: 2200}); before != want {
		t.Fatalf("before the cancel: %+v, want %+v", before, want)
	}

	paused, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskPause, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range waiting {
		if got := b.get(inv.ID); got.State != inv.State && got.State != controlplane.AwaitingApproval {
			t.Errorf("pausing moved %s to %s; a pause keeps what waits for a person pending", inv.ID, got.State)
		}
	}
	if after := b.waitingFigures(task, o.ID); after != before {
		t.Errorf("after the pause: %+v, want %+v as before", after, before)
	}

	cancelled, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskCancel, paused.Version)
	if err != nil || cancelled.State != controlplane.TaskCancelled {
		t.Fatalf("cancel: %+v, %v", cancelled, err)
	}
	for _, inv := range waiting {
		got := b.wantState(inv.ID, controlplane.NotDispatched)
		if got.NotDispatchedReason != controlplane.ReasonTaskCancelled || !got.Withdrawn() || got.FinishedAt == nil {
			t.Errorf("%s: reason %q, withdrawn %v, finished %v", inv.ID, got.NotDispatchedReason, got.Withdrawn(), got.FinishedAt)
		}
		if r := got.Reason(); r == nil || r.Code != "task_cancelled" ||
			r.Message != "The task was cancelled before this was decided, so it was withdrawn; nothing was sent." {
			t.Errorf("%s reason: %+v", inv.ID, r)
		}
		if say := got.Say(b.cp.ActionSpec("shop", "issue_refund")); say != "This request was withdrawn because the task it belonged to was cancelled, so nothing has changed." {
			t.Errorf("%s say: %q", inv.ID, say)
		}
	}
	if after := b.waitingFigures(task, o.ID); after != (waitingFigures{}) {
		t.Errorf("after the cancel: %+v, want nothing left in the queue, the counts, the claims or the exposure", after)
	}

	events, err := b.cp.Timeline(b.ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	notDispatched, withdrawn := map[string]string{}, 0
	for _, e := range events {
		switch e.Action {
		case "invocation.not_dispatched":
			if e.Data["reason"] == "task_cancelled" && e.Data[controlplane.DataWithdrawn] == true {
				notDispatched[e.InvocationID], _ = e.Data["was"].(string)
			}
		case "task.cancelled":
			ids, _ := e.Data[controlplane.DataWithdrawnIDs].([]any)
			withdrawn = len(ids)
		}
	}
	if len(notDispatched) != 3 || notDispatched[confirm.ID] != "awaiting_confirmation" || notDispatched[second.ID] != "awaiting_approval" || withdrawn != 3 {
		t.Errorf("events: not dispatched %v, task.cancelled lists %d withdrawn; want each of the three", notDispatched, withdrawn)
	}

	// Nothing is left to decide, by the customer or an agent.
	customer := controlplane.CustomerProvedOn(b.customer.Email, "code", confirm.ID)
	d, err := customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: customer, InvocationID: confirm.ID, Verb: controlplane.CustomerConfirm})
	if err != nil || d.Done || d.Invocation.State != controlplane.NotDispatched {
		t.Errorf("the customer's confirm of a withdrawn request: %+v, %v; want nothing done, the end state shown", d, err)
	}
	if _, err := staffApprove(b.ctx, b.cp, b.agent2, second.ID, 0); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("second approval of a withdrawn request: %v, want illegal_transition", err)
	}
	if _, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: approve.ID, Verb: controlplane.StaffReject, Version: 0, Reason: controlplane.OtherReason, Other: "no"}); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("rejecting a withdrawn request: %v, want illegal_transition", err)
	}
	b.dispatchAll()
	if len(b.effects("")) != 0 {
		t.Error("something of a cancelled task reached the shop")
	}
}

// TestWithdrawCancelledSweepsStragglers: a request left waiting in a
// cancelled task (as a path not serialised with the cancellation could
// leave one) is withdrawn by the sweep; one of an active task is not.
func TestWithdrawCancelledSweepsStragglers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StagePropose)
	gone := b.task([]string{"issue_refund"}, 10, 2, 60)
	live := b.task([]string{"issue_refund"}, 10, 2, 60)
	straggler := b.propose(gone, "issue_refund", refund(b.order(3).ID, 300, "damaged"), "")
	kept := b.propose(live, "issue_refund", refund(b.order(3).ID, 300, "damaged"), "")
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE tasks SET state = 'cancelled' WHERE id = $1`, gone.ID); err != nil {
		t.Fatal(err)
	}
	sw, err := b.cp.Sweep(b.ctx)
	if err != nil || sw.Withdrawn != 1 {
		t.Fatalf("sweep: %+v, %v; want 1 withdrawn", sw, err)
	}
	if got := b.wantState(straggler.ID, controlplane.NotDispatched); !got.Withdrawn() {
		t.Errorf("straggler not withdrawn: %+v", got)
	}
	b.wantState(kept.ID, controlplane.AwaitingApproval)
}
