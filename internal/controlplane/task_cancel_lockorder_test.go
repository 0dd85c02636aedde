package controlplane_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// lockOrderCase is a change to a waiting request that locks the request
// and its task, as a cancellation does: a customer's fresh quote after the
// target changed, or an agent's edit of the arguments.
type lockOrderCase struct {
	name string
	// prepare opens a task with one waiting request, ready for change.
	prepare func(b *testBundle) (controlplane.Task, controlplane.Invocation)
	// change re-quotes or edits the request and returns its error.
	change func(b *testBundle, inv controlplane.Invocation) error
}

var lockOrderCases = []lockOrderCase{
	{"requote", func(b *testBundle) (controlplane.Task, controlplane.Invocation) {
		b.setStage("issue_refund", controlplane.StageAssisted)
		task := b.task([]string{"issue_refund"}, 5, 2, 60)
		order := b.order(3)
		inv := b.propose(task, "issue_refund", refund(order.ID, 1000, "damaged"), "")
		b.changeOrder(order.ID)
		return task, inv
	}, func(b *testBundle, inv controlplane.Invocation) error {
		d, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID), inv.ID)
		// After a cancellation the customer's door finds nothing to decide
		// (not Done); before it, the changed order is quoted afresh.
		if err == nil && (d.Done || d.Requoted && d.Invocation.ID == inv.ID) {
			err = errors.New("the confirm of a changed order went through without a fresh quote")
		}
		return err
	}},
	{"edit", func(b *testBundle) (controlplane.Task, controlplane.Invocation) {
		b.setStage("issue_refund", controlplane.StagePropose)
		task := b.task([]string{"issue_refund"}, 5, 2, 60)
		return task, b.propose(task, "issue_refund", refund(b.order(3).ID, 1000, "damaged"), "")
	}, func(b *testBundle, inv controlplane.Invocation) error {
		_, err := b.cp.StaffDecide(b.ctx, controlplane.StaffDecision{Actor: b.agent, InvocationID: inv.ID, Verb: controlplane.StaffEdit, Version: inv.Version, Args: mustJSON(b.t, refund(inv.Target.ID, 800, "damaged"))})
		return err
	}},
}

// changeOrder refunds part of an order at the shop, so its version moves
// and a fresh quote supersedes one shown before.
func (b *testBundle) changeOrder(orderID string) {
	b.t.Helper()
	body, _ := json.Marshal(map[string]any{"order_id": orderID, "amount_cents": 500, "reason": "goodwill"})
	res, err := b.shopPost("/refunds", "application/json", bytes.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	res.Body.Close()
}

// TestCancelWaitsForAChangeHoldingItsLocks holds a re-quote and an edit in
// their transactions once they locked the request and its task, and
// cancels the task meanwhile: the cancellation waits for the request's
// lock, in the order every path takes them (request, then task), so
// neither fails with a deadlock (40P01). The change is recorded, and the
// cancellation then withdraws what waits: the edited request, or the
// superseded request's successor.
func TestCancelWaitsForAChangeHoldingItsLocks(t *testing.T) {
	t.Parallel()
	for _, c := range lockOrderCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			task, inv := c.prepare(b)
			locked, release := make(chan struct{}), make(chan struct{})
			var held atomic.Bool
			b.cp.SetHooks(controlplane.Hooks{ChangeLocked: func(string) {
				if held.CompareAndSwap(false, true) {
					close(locked)
					<-release
				}
			}})
			changed := make(chan error, 1)
			go func() { changed <- c.change(b, inv) }()
			select {
			case <-locked:
			case err := <-changed:
				t.Fatalf("%s ended before it held its locks: %v", c.name, err)
			}
			cancelled := make(chan error, 1)
			go func() {
				_, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskCancel, 0)
				cancelled <- err
			}()
			waited := b.untilWaitingOnLock("", 1, cancelled)
			close(release)
			if err := <-changed; err != nil {
				t.Errorf("%s: %v%s", c.name, err, deadlock(err))
			}
			if err := <-cancelled; err != nil {
				t.Errorf("cancel: %v%s", err, deadlock(err))
			}
			if !waited {
				t.Errorf("the cancel ended while the %s held the request and its task", c.name)
			}
			b.wantChangedThenWithdrawn(c.name, inv)
		})
	}
}

// TestCancelRacingAChange starts a cancellation and a re-quote or an edit
// of a waiting request together from goroutines against real PostgreSQL.
// Neither fails but by the refusal of a change after the cancellation
// (task_not_active or illegal_transition; never a deadlock), and nothing is left waiting: the request is withdrawn, or
// superseded with its successor withdrawn.
func TestCancelRacingAChange(t *testing.T) {
	t.Parallel()
	for _, c := range lockOrderCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			changedFirst := 0
			for i := range 8 {
				task, inv := c.prepare(b)
				start := make(chan struct{})
				var wg sync.WaitGroup
				var changeErr, cancelErr error
				wg.Go(func() {
					<-start
					_, cancelErr = b.cp.ChangeTask(b.ctx, b.agent, task.ID, controlplane.TaskCancel, 0)
				})
				wg.Go(func() {
					<-start
					changeErr = c.change(b, inv)
				})
				close(start)
				wg.Wait()
				if cancelErr != nil {
					t.Fatalf("round %d: cancel: %v%s", i, cancelErr, deadlock(cancelErr))
				}
				// A change that comes after the cancellation is refused:
				// by its first look at the request, or by the task's
				// check under the locks (mayRecord).
				if e, ok := apperr.As(changeErr); changeErr != nil && (!ok || (e.Code != "task_not_active" && e.Code != "illegal_transition")) {
					t.Errorf("round %d: %s: %v%s, want done, or refused as task_not_active or illegal_transition", i, c.name, changeErr, deadlock(changeErr))
				}
				got := b.get(inv.ID)
				if got.Withdrawn() {
					continue
				}
				b.wantChangedThenWithdrawn(c.name, inv)
				changedFirst++
			}
			t.Logf("the %s came first in %d of 8 rounds", c.name, changedFirst)
		})
	}
}

// wantChangedThenWithdrawn checks inv was changed and then withdrawn by
// its task's cancellation: an edited request withdrawn, or a superseded
// one whose successor was withdrawn.
func (b *testBundle) wantChangedThenWithdrawn(name string, inv controlplane.Invocation) {
	b.t.Helper()
	got := b.get(inv.ID)
	if name == "edit" {
		if !got.Withdrawn() || got.Args.Approved == nil {
			b.t.Errorf("edited request: %s (withdrawn %v, edited %v), want edited, then withdrawn", got.State, got.Withdrawn(), got.Args.Approved != nil)
		}
		return
	}
	next, err := b.cp.Successor(b.ctx, inv.ID)
	if got.State != controlplane.Rejected || err != nil || !next.Withdrawn() {
		b.t.Errorf("re-quoted request: %s, successor %s (%v), want superseded with its successor withdrawn", got.State, next.State, err)
	}
}

// deadlock marks an error PostgreSQL raised on a deadlock.
func deadlock(err error) string {
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "40P01" {
		return " (a deadlock: 40P01)"
	}
	return ""
}
