package controlplane_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"countersign/internal/controlplane"
	"countersign/store"
)

// TestSweepDoesNotWaitForABlockedDispatch hangs a console inside a permit
// (its transaction holds a task's row lock, as a console frozen by SIGSTOP
// does) while another console's write sits at the shop: the healthy
// console's dispatcher blocks on that lock, and the lease that runs out
// meanwhile must still be swept within a few intervals, not when the hung
// console lets go (the chaos campaign's console_freeze fault makes such
// hangs).
func TestSweepDoesNotWaitForABlockedDispatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	atShop := b.edits(b.task([]string{"update_product_description"}, 10, 5, 1000), 1)[0]
	hung, gate := b.gatedService(false)
	t.Cleanup(func() { close(gate.open) })
	go func() { _, _ = hung.Dispatch(context.WithoutCancel(b.ctx), atShop.ID) }()
	<-gate.arrived

	locked := b.task([]string{"update_product_description"}, 10, 5, 1000)
	b.edits(locked, 1)
	tx, err := b.store.Pool().Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(b.ctx, `SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE`, locked.ID); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(b.ctx)
	t.Cleanup(cancel)
	const interval = 20 * time.Millisecond
	go b.cp.RunDispatcher(ctx, interval)
	waitFor(t, "the dispatcher to block on the locked task", func() bool {
		var waiting int
		err := b.store.Pool().QueryRow(b.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
		return err == nil && waiting > 0
	})
	b.clock.Advance(gatedLease + time.Second)
	waitFor(t, "the sweep to make the write at the shop unverified", func() bool {
		return b.get(atShop.ID).State == controlplane.Unverified
	})
}

// waitFor polls cond for up to five seconds of real time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSweepSkipsARowAFrozenConsoleHolds freezes a console inside
// StartSend's transaction (it holds one invocation's row lock and never
// commits) while two writes sit at the shop past their leases: the sweep
// must not wait for the frozen console. It sweeps the other write, leaves
// the locked one dispatching, and sweeps that one on the pass after the
// lock is gone (PostgreSQL ends the frozen session after the idle-in-
// transaction timeout; here the test rolls it back).
func TestSweepSkipsARowAFrozenConsoleHolds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var atShop []controlplane.Invocation
	var gates []*gatedShop
	for range 2 {
		inv := b.edits(b.task([]string{"update_product_description"}, 10, 5, 1000), 1)[0]
		cp, gate := b.gatedService(false)
		gates = append(gates, gate)
		go func() { _, _ = cp.Dispatch(context.WithoutCancel(b.ctx), inv.ID) }()
		<-gate.arrived
		atShop = append(atShop, inv)
	}
	t.Cleanup(func() {
		for _, g := range gates {
			close(g.open)
		}
	})
	frozen, free := atShop[0], atShop[1]

	tx, err := b.store.Pool().Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(b.ctx, `SELECT 1 FROM invocations WHERE id = $1 FOR UPDATE`, frozen.ID); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(gatedLease + time.Second)

	// A sweep that waited for the lock would wait for ever: the deadline
	// turns that into a failure instead of a hung test.
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	sw, err := b.cp.Sweep(ctx)
	if err != nil {
		t.Fatalf("sweep with a locked row: %v", err)
	}
	if sw.Unverified != 1 {
		t.Errorf("first sweep made %d unverified, want 1 (the unlocked write)", sw.Unverified)
	}
	if got := b.get(free.ID).State; got != controlplane.Unverified {
		t.Errorf("unlocked write is %s after the sweep, want unverified", got)
	}
	if got := b.get(frozen.ID).State; got != controlplane.Dispatching {
		t.Errorf("locked write is %s while the frozen console holds it, want dispatching", got)
	}

	if err := tx.Rollback(b.ctx); err != nil {
		t.Fatal(err)
	}
	if sw, err = b.cp.Sweep(ctx); err != nil || sw.Unverified != 1 {
		t.Fatalf("second sweep: %d unverified, %v; want 1, nil", sw.Unverified, err)
	}
	if got := b.get(frozen.ID).State; got != controlplane.Unverified {
		t.Errorf("write is %s once the lock is gone, want unverified", got)
	}
}

// leaseBlindStore cannot read the expired leases: the first of Sweep's
// nets fails.
type leaseBlindStore struct{ *store.Store }

func (leaseBlindStore) ExpiredLeases(context.Context, time.Time, int) ([]store.Invocation, error) {
	return nil, errors.New("the expired leases cannot be read")
}

// TestSweepRunsEveryNetWhenOneFails: the lease sweep fails, and the
// deadline and cancelled-task nets run all the same; the error names the
// net that failed, and the counts say what the others did.
func TestSweepRunsEveryNetWhenOneFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	late := b.propose(b.task([]string{"issue_refund"}, 10, 2, 60), "issue_refund", refund(b.order(3).ID, 300, "damaged"), "")
	b.clock.Advance(31 * time.Minute) // past the confirmation window
	gone := b.task([]string{"issue_refund"}, 10, 2, 60)
	straggler := b.propose(gone, "issue_refund", refund(b.order(4).ID, 300, "damaged"), "")
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE tasks SET state = 'cancelled' WHERE id = $1`, gone.ID); err != nil {
		t.Fatal(err)
	}
	cp := controlplane.New(leaseBlindStore{b.store}, b.reg, controlplane.Config{CallTimeout: 5 * time.Second, LeaseMargin: time.Second}, b.clock.Now, nil)
	sw, err := cp.Sweep(b.ctx)
	if err == nil || !strings.Contains(err.Error(), "sweep leases") || sw.Expired != 1 || sw.Withdrawn != 1 {
		t.Fatalf("Sweep = %+v, %v; want the lease sweep's error, 1 expired and 1 withdrawn", sw, err)
	}
	b.wantState(late.ID, controlplane.Expired)
	if got := b.wantState(straggler.ID, controlplane.NotDispatched); !got.Withdrawn() {
		t.Errorf("straggler not withdrawn: %+v", got)
	}
}
