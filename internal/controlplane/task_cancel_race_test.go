package controlplane_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"countersign/internal/controlplane"
)

// TestCancelRacingADecision: a cancellation and a decision on the same
// waiting request — the customer's confirmation (through the API's Confirm
// and through the page's CustomerDecide) or an agent's approval — started
// together from goroutines against real PostgreSQL, with the dispatcher
// sending. Exactly one wins: either the decision is recorded (and the
// request then left before the cancellation committed, or was stopped by
// it as approved work), or the request is withdrawn and the decision is
// refused; no decision is recorded after the cancellation. Nothing is left
// waiting; a withdrawn or not dispatched request
// never reaches the shop; one that reached it started before the cancel.
func TestCancelRacingADecision(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, stop := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.cp.RunDispatcher(ctx, time.Hour) }()

	type round struct {
		kind string
		task controlplane.Task
		inv  controlplane.Invocation
		won  bool
	}
	var rounds []*round
	decide := map[string]func(inv controlplane.Invocation) bool{
		"confirm": func(inv controlplane.Invocation) bool {
			d, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID), inv.ID)
			return err == nil && d.Done
		},
		"customer page": func(inv controlplane.Invocation) bool {
			d, err := customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{
				Actor: controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID), InvocationID: inv.ID, Verb: controlplane.CustomerConfirm})
			if err != nil {
				t.Errorf("customer page confirm: %v", err)
			}
			return err == nil && d.Done
		},
		"approve": func(inv controlplane.Invocation) bool {
			_, err := staffApprove(b.ctx, b.cp, b.agent, inv.ID, 0)
			return err == nil
		},
	}
	for _, kind := range []string{"confirm", "customer page", "approve"} {
		stage := controlplane.StageAssisted
		if kind == "approve" {
			stage = controlplane.StagePropose
		}
		b.setStage("issue_refund", stage)
		for i := range 8 {
			r := &round{kind: kind, task: b.task([]string{"issue_refund"}, 5, 2, 60)}
			r.inv = b.propose(r.task, "issue_refund", refund(b.order(3).ID, int64(100+i), "damaged"), "")
			start := make(chan struct{})
			var wg sync.WaitGroup
			var cancelErr error
			wg.Go(func() {
				<-start
				_, cancelErr = b.cp.ChangeTask(b.ctx, b.assistant, r.task.ID, controlplane.TaskCancel, 0)
			})
			wg.Go(func() {
				<-start
				r.won = decide[kind](r.inv)
			})
			close(start)
			wg.Wait()
			if cancelErr != nil {
				t.Fatalf("%s round %d: cancel: %v", kind, i, cancelErr)
			}
			rounds = append(rounds, r)
		}
	}
	stop()
	<-done
	b.dispatchAll()

	wins := map[string]int{}
	for _, r := range rounds {
		got := b.get(r.inv.ID)
		events, err := b.cp.Timeline(b.ctx, r.task.ID)
		if err != nil {
			t.Fatal(err)
		}
		var decided, started, cancelled int64
		for _, e := range events {
			switch {
			case e.InvocationID == r.inv.ID && (e.Action == "invocation.confirmed" || e.Action == "invocation.approved"):
				decided = e.ID
			case e.InvocationID == r.inv.ID && e.Action == "dispatch.started":
				started = e.ID
			case e.Action == "task.cancelled":
				cancelled = e.ID
			}
		}
		sent := len(b.effects(r.inv.IdempotencyKey)) > 0
		if r.won {
			wins[r.kind]++
		}
		switch {
		case got.State == controlplane.AwaitingConfirmation || got.State == controlplane.AwaitingApproval || got.State == controlplane.Approved:
			t.Errorf("%s %s: left %s in a cancelled task", r.kind, r.inv.ID, got.State)
		case r.won == got.Withdrawn():
			t.Errorf("%s %s: decision won %v, withdrawn %v (%s): exactly one must win", r.kind, r.inv.ID, r.won, got.Withdrawn(), got.State)
		case r.won != (decided != 0):
			t.Errorf("%s %s: decision won %v but its event says %v", r.kind, r.inv.ID, r.won, decided != 0)
		case r.won && decided > cancelled:
			t.Errorf("%s %s: decided (event %d) after the task was cancelled (event %d)", r.kind, r.inv.ID, decided, cancelled)
		case sent && (started == 0 || started > cancelled):
			t.Errorf("%s %s: reached the shop without starting before the cancel (started %d, cancelled %d)", r.kind, r.inv.ID, started, cancelled)
		case got.State == controlplane.NotDispatched && (sent || started != 0):
			t.Errorf("%s %s: not dispatched, yet it started (%d) or reached the shop (%v)", r.kind, r.inv.ID, started, sent)
		}
	}
	t.Logf("decisions that won against the cancel: %v of 8 each", wins)
}

// TestCancelWaitsForADecisionUnderWay: a customer's confirmation that holds
// its request and waits for the task (held here by another transaction)
// when the cancellation starts is waited for, in the order decisions take
// their locks (request, then task), so neither fails with a deadlock: the
// confirmation is recorded, and the cancellation stops it as approved work
// (not a withdrawal).
func TestCancelWaitsForADecisionUnderWay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 2, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(3).ID, 100, "damaged"), "")
	hold, err := b.store.Pool().Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback(context.Background()) }()
	if _, err := hold.Exec(b.ctx, `SELECT 1 FROM tasks WHERE id = $1 FOR SHARE`, task.ID); err != nil {
		t.Fatal(err)
	}
	confirmed := make(chan error, 1)
	go func() {
		d, err := customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{
			Actor: controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID), InvocationID: inv.ID, Verb: controlplane.CustomerConfirm})
		if err == nil && !d.Done {
			err = context.Canceled
		}
		confirmed <- err
	}()
	// The confirmation holds the request, waiting for the task.
	if !b.untilWaitingOnLock("", 1, confirmed) {
		t.Fatalf("the confirmation ended (%v) while a transaction held its task", <-confirmed)
	}
	cancelled := make(chan error, 1)
	go func() {
		_, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskCancel, 0)
		cancelled <- err
	}()
	if !b.untilWaitingOnLock("", 2, cancelled) {
		t.Fatalf("the cancellation ended (%v) while the confirmation held the request", <-cancelled)
	}
	if err := hold.Rollback(b.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-confirmed; err != nil {
		t.Errorf("confirmation: %v", err)
	}
	if err := <-cancelled; err != nil {
		t.Errorf("cancel: %v", err)
	}
	got := b.wantState(inv.ID, controlplane.NotDispatched)
	if got.Withdrawn() || got.ApprovedAt == nil || got.NotDispatchedReason != controlplane.ReasonTaskCancelled {
		t.Errorf("confirmed, then cancelled: %+v; want approved work stopped by the cancel", got)
	}
}
