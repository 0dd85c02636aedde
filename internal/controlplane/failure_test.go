package controlplane_test

import (
	"net/http"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/store/dbtest"
)

func (b *testBundle) approved(task controlplane.Task, action string, args any) controlplane.Invocation {
	b.t.Helper()
	inv := b.propose(task, action, args, "")
	if inv.State == controlplane.AwaitingApproval {
		var err error
		if inv, err = staffApprove(b.ctx, b.cp, b.agent, inv.ID, inv.Version); err != nil {
			b.t.Fatal(err)
		}
	}
	return inv
}

// TestLostResponseIsUnverifiedNeverResentThenReconciled: the shop commits a
// refund and drops the answer. The invocation becomes unverified; nothing
// sends it again; reconciling finds the effect and completes it.
func TestLostResponseIsUnverifiedNeverResentThenReconciled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.approved(task, "issue_refund", refund(b.order(4).ID, 4200, "damaged"))
	if err := b.shop.SetFault(demoshop.FaultRule{Route: "POST /refunds", DropAfterCommit: 1}); err != nil {
		t.Fatal(err)
	}
	b.dispatchAll()
	u := b.wantState(inv.ID, controlplane.Unverified)
	if u.Error == nil || u.Error.Retryable {
		t.Errorf("unverified error = %+v, want a non-retryable unknown outcome", u.Error)
	}
	if say := u.Say(adapter.ActionSpec{}); say != "I could not confirm this went through; a person will check and we will let you know." {
		t.Errorf("say = %q", say)
	}
	b.dispatchAll()
	if _, err := b.cp.Dispatch(b.ctx, inv.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(b.effects(inv.IdempotencyKey)); n != 1 {
		t.Fatalf("shop ledger holds %d effects, want 1: nothing may re-send", n)
	}

	rec, err := b.cp.Reconcile(b.ctx, b.agent, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Conclusive || rec.Invocation.State != controlplane.Completed || rec.Invocation.Result == nil || rec.Invocation.Result.Reference == "" {
		t.Fatalf("reconcile: conclusive=%v state=%s result=%+v", rec.Conclusive, rec.Invocation.State, rec.Invocation.Result)
	}
	if n := len(b.effects("")); n != 1 {
		t.Errorf("reconcile sent something: %d effects", n)
	}
}

// TestUnverifiedWithoutEvidenceStaysUnverified: the request was reset
// before the shop applied it; the ledger shows nothing, which is not proof,
// so reconciling leaves it for a person.
func TestUnverifiedWithoutEvidenceStaysUnverified(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.approved(task, "issue_refund", refund(b.order(4).ID, 1000, "wrong_item"))
	if err := b.shop.SetFault(demoshop.FaultRule{Route: "POST /refunds", ResetRate: 1}); err != nil {
		t.Fatal(err)
	}
	b.dispatchAll()
	b.wantState(inv.ID, controlplane.Unverified)
	rec, err := b.cp.Reconcile(b.ctx, b.agent, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Conclusive || rec.Invocation.State != controlplane.Unverified {
		t.Errorf("reconcile without evidence: conclusive=%v state=%s", rec.Conclusive, rec.Invocation.State)
	}
	if n, _ := dbtest.CountEvents(b.ctx, b.store.Pool(), "invocation.reconcile_inconclusive", &task.ID); n != 1 {
		t.Errorf("inconclusive reconcile not recorded (%d)", n)
	}
}

func TestAcceptedButNotAppliedIsUnverified(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("update_product_description", controlplane.StageAutonomous)
	task := b.task([]string{"update_product_description"}, 10, 2, 60)
	p := b.product()
	if err := b.shop.SetFault(demoshop.FaultRule{Route: "PATCH /products/{id}", IgnoreWrites: 1}); err != nil {
		t.Fatal(err)
	}
	inv := b.propose(task, "update_product_description", map[string]any{"product_id": p.ID, "description": "New words."}, "")
	b.dispatchAll()
	got := b.wantState(inv.ID, controlplane.Unverified)
	if got.Verification == nil || got.Verification.Verified {
		t.Errorf("verification = %+v", got.Verification)
	}
}

func TestTargetChangedAfterQuoteIsNotDispatched(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	o := b.order(4)
	inv := b.approved(task, "issue_refund", refund(o.ID, 1000, "wrong_item"))
	// The order changes after the quote: refunded in another tab.
	res, err := b.shopPost("/refunds", "application/json",
		strings.NewReader(`{"order_id":"`+o.ID+`","amount_cents":500,"reason":"wrong_item"}`))
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("refund in another tab: %v %v", res, err)
	}
	res.Body.Close()
	b.dispatchAll()
	got := b.wantState(inv.ID, controlplane.NotDispatched)
	if got.NotDispatchedReason != controlplane.ReasonTargetChanged {
		t.Errorf("reason = %s, want target_changed", got.NotDispatchedReason)
	}
	if n := len(b.effects(inv.IdempotencyKey)); n != 0 {
		t.Errorf("a stale invocation reached the shop (%d effects)", n)
	}
}

// TestNoGuessingAfterPolicyRefusal is the model guessing around a policy:
// after a refusal it retries with a smaller amount, another reason, the same call.
// Each is refused with the original reason and recorded.
func TestNoGuessingAfterPolicyRefusal(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	o := b.order(45)
	_, err := b.tryPropose(task, "issue_refund", refund(o.ID, 4200, "damaged"), "")
	first, ok := apperr.As(err)
	if !ok || first.Code != "outside_refund_window_store_credit" {
		t.Fatalf("first refusal: %v", err)
	}
	for _, args := range []map[string]any{refund(o.ID, 1000, "damaged"), refund(o.ID, 4200, "not_received"), refund(o.ID, 4200, "damaged")} {
		_, err := b.tryPropose(task, "issue_refund", args, "")
		e, ok := apperr.As(err)
		if !ok || e.Code != "blocked_after_refusal" || e.Hint == "" {
			t.Errorf("retry %v: %v, want blocked_after_refusal with a hint", args, err)
		}
	}
	if n, _ := dbtest.CountEvents(b.ctx, b.store.Pool(), "proposal.blocked_after_refusal", &task.ID); n != 3 {
		t.Errorf("blocked attempts recorded = %d, want 3", n)
	}
	// Another order of the same task is not blocked.
	if _, err := b.tryPropose(task, "issue_refund", refund(b.order(3).ID, 1000, "wrong_item"), ""); err != nil {
		t.Errorf("another target blocked too: %v", err)
	}
	if err := b.cp.LiftBlock(b.ctx, b.agent, task.ID, "shop", o.ID, "The customer sent the delivery note; refund window checked again."); err != nil {
		t.Fatal(err)
	}
	_, err = b.tryPropose(task, "issue_refund", refund(o.ID, 1000, "damaged"), "")
	if e, ok := apperr.As(err); !ok || e.Code != "outside_refund_window_store_credit" {
		t.Errorf("after lifting the block: %v, want the policy's own refusal again", err)
	}
}

func TestReverseThroughCompensation(t *testing.T) {
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

	rev, err := b.cp.Reverse(b.ctx, b.agent, cancel.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Action != "reinstate_subscription" || rev.CompensatesID != cancel.ID || rev.State != controlplane.AwaitingApproval {
		t.Fatalf("reversal = %s %s compensates %q", rev.Action, rev.State, rev.CompensatesID)
	}
	if _, err := staffApprove(b.ctx, b.cp, b.agent2, rev.ID, rev.Version); err != nil {
		t.Fatal(err)
	}
	b.dispatchAll()
	b.wantState(rev.ID, controlplane.Completed)
	b.wantState(cancel.ID, controlplane.Reversed)
	if _, err := b.cp.Reverse(b.ctx, b.agent, cancel.ID); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("reversing twice: %v", err)
	}
}

func TestGlobalStopAndCancelLeaveWorkNotDispatched(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 10, 2, 60)
	inv := b.approved(task, "issue_refund", refund(b.order(4).ID, 100, "wrong_item"))
	admin := controlplane.UserActor(99, "admin", "Root")
	if err := b.cp.SetGlobalStop(b.ctx, b.agent, true); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("agent flipping the global stop: %v", err)
	}
	if err := b.cp.SetGlobalStop(b.ctx, admin, true); err != nil {
		t.Fatal(err)
	}
	b.dispatchAll()
	if got := b.wantState(inv.ID, controlplane.NotDispatched); got.NotDispatchedReason != controlplane.ReasonGlobalStop {
		t.Errorf("reason = %s", got.NotDispatchedReason)
	}
	if err := b.cp.SetGlobalStop(b.ctx, admin, false); err != nil {
		t.Fatal(err)
	}

	pending := b.propose(task, "issue_refund", refund(b.order(2).ID, 100, "wrong_item"), "")
	approved := b.approved(task, "issue_refund", refund(b.order(3).ID, 100, "wrong_item"))
	if _, err := b.cp.ChangeTask(b.ctx, b.assistant, task.ID, controlplane.TaskCancel, 0); err != nil {
		t.Fatal(err)
	}
	if got := b.wantState(approved.ID, controlplane.NotDispatched); got.NotDispatchedReason != controlplane.ReasonTaskCancelled {
		t.Errorf("reason = %s", got.NotDispatchedReason)
	}
	// What waited for a person is withdrawn with the task (issue 32).
	if got := b.wantState(pending.ID, controlplane.NotDispatched); !got.Withdrawn() {
		t.Errorf("pending request of the cancelled task: %+v, want withdrawn", got)
	}
	if _, err := b.tryPropose(task, "issue_refund", refund(b.order(2).ID, 200, "wrong_item"), ""); !apperr.Is(err, apperr.IllegalTransition) {
		t.Errorf("proposing on a cancelled task: %v", err)
	}
}

func TestEventsAreAppendOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.task([]string{"issue_refund"}, 1, 1, 1)
	for _, sql := range []string{"UPDATE events SET action = 'forged'", "DELETE FROM events", "TRUNCATE events"} {
		if _, err := b.store.Pool().Exec(b.ctx, sql); err == nil {
			t.Errorf("%s succeeded from the application role", sql)
		}
	}
	var n int
	if err := b.store.Pool().QueryRow(b.ctx, "SELECT count(*) FROM events WHERE action = 'task.created'").Scan(&n); err != nil || n != 1 {
		t.Errorf("events after the attempts: %d, %v", n, err)
	}
}
