package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"countersign/internal/adapter"
	"countersign/store"
)

// Swept counts what one Sweep changed.
type Swept struct {
	// Unverified are dispatches found past their lease, now unverified.
	Unverified int
	// Expired are requests found past their decision deadline, now
	// expired.
	Expired int
	// Withdrawn are requests found still waiting for a person in a
	// cancelled task, now not dispatched (task_cancelled).
	Withdrawn int
}

// Sweep runs the control plane's three nets once: expired leases become
// unverified (sweepLeases), passed deadlines expired (expireDue), and
// requests left waiting in a cancelled task withdrawn (withdrawCancelled).
// RunDispatcher runs it at start-up and every interval. Each net runs even
// when one before it failed; their errors come back joined, each naming
// its net, with the counts of what was done.
func (s *Service) Sweep(ctx context.Context) (Swept, error) {
	var out Swept
	var errs []error
	var err error
	if out.Unverified, err = s.sweepLeases(ctx); err != nil {
		errs = append(errs, fmt.Errorf("sweep leases: %w", err))
	}
	if out.Expired, err = s.expireDue(ctx); err != nil {
		errs = append(errs, fmt.Errorf("expire due: %w", err))
	}
	if out.Withdrawn, err = s.withdrawCancelled(ctx); err != nil {
		errs = append(errs, fmt.Errorf("withdraw requests of cancelled tasks: %w", err))
	}
	return out, errors.Join(errs...)
}

// sweepLockWait is how long the sweep waits for an invocation's row lock
// before leaving that row to its next pass.
const sweepLockWait = 200 * time.Millisecond

// sweepLeases makes every invocation still dispatching after its lease
// unverified: the console that held it died or lost track, or its worker
// did not start the send within the lease and so will not send it (found
// at start-up and by the periodic sweep). Nothing is re-sent.
func (s *Service) sweepLeases(ctx context.Context) (int, error) {
	rows, err := s.store.ExpiredLeases(ctx, s.now(), 500)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		err := s.store.InTx(ctx, func(tx *store.Tx) error {
			// A console frozen inside StartSend's transaction holds the
			// row; waiting for it would stall every other expired lease
			// behind it. Skip it this pass: PostgreSQL ends that session
			// after the idle-in-transaction timeout, and the next pass
			// sweeps the row (or finds StartSend committed first).
			if err := tx.LockTimeout(ctx, sweepLockWait); err != nil {
				return err
			}
			now := s.now()
			ae := &adapter.Error{Code: adapter.CodeOutcomeUnknown, Outcome: adapter.Unknown,
				Message: "The console lost track of this request while it was being sent; it may or may not have been applied.",
				Hint:    "Do not retry. Inspect the original call and reconcile it."}
			raw, _ := json.Marshal(ae)
			// The version read with the expired lease: a worker that
			// restarted the lease since (StartSend bumps it) wins.
			if _, err := tx.TransitionInvocation(ctx, r.ID, []string{string(Dispatching)}, r.Version, string(Unverified), now,
				store.InvocationChange{Error: raw}); err != nil {
				return err
			}
			return s.record(ctx, tx, SystemActor, EventInvocationUnverified, r.TaskID, r.ID, map[string]any{
				"code": ae.Code, "lease_until": r.LeaseUntil})
		})
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if errors.Is(err, store.ErrBusy) {
			s.log.Warn("sweep: invocation locked by another session; trying again next pass", "invocation", r.ID)
			continue
		}
		if err != nil {
			return n, fmt.Errorf("controlplane: sweep %s: %w", r.ID, err)
		}
		n++
	}
	return n, nil
}

// expireDue moves invocations whose decision deadline passed to expired.
// It returns how many it expired.
func (s *Service) expireDue(ctx context.Context) (int, error) {
	rows, err := s.store.PastDeadline(ctx, s.now(), 500)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		err := s.store.InTx(ctx, func(tx *store.Tx) error {
			now := s.now()
			updated, err := tx.TransitionInvocation(ctx, r.ID, []string{string(AwaitingConfirmation), string(AwaitingApproval)},
				r.Version, string(Expired), now, store.InvocationChange{FinishedAt: &now})
			if err != nil {
				return err
			}
			return s.record(ctx, tx, SystemActor, EventInvocationExpired, updated.TaskID, r.ID, map[string]any{"was": r.State})
		})
		if errors.Is(err, store.ErrConflict) {
			continue // decided meanwhile
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
