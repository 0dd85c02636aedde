package controlplane

import (
	"context"
	"errors"

	"countersign/store"
)

// This file holds what a pause or a cancellation ends: approved work that
// has not left (both), and requests waiting for a person (a cancellation).

// withdrawnSentence says why a request that waited for a person ended when
// its task was cancelled: nobody decided on it, and nothing was sent.
const withdrawnSentence = "The task was cancelled before this was decided, so it was withdrawn; nothing was sent."

// Withdrawn reports whether inv ended because its task was cancelled while
// it still waited for a person (the customer's confirmation or an agent's
// approval): it was never approved, so nothing of it was sent.
func (inv Invocation) Withdrawn() bool {
	return inv.State == NotDispatched && inv.NotDispatchedReason == ReasonTaskCancelled && inv.ApprovedAt == nil
}

// stopApproved marks the task's approved invocations that no dispatcher
// holds as not dispatched. One a dispatcher holds is skipped here; the
// dispatcher sees the task's new state under the task lock and stops it.
func (s *Service) stopApproved(ctx context.Context, tx *store.Tx, taskID string, reason NotDispatchedReason) ([]string, error) {
	ids, err := tx.LockApprovedOfTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	r := string(reason)
	now := s.now()
	for _, id := range ids {
		if _, err := tx.TransitionInvocation(ctx, id, []string{string(Approved)}, 0, string(NotDispatched), now,
			store.InvocationChange{NotDispatchedReason: &r, FinishedAt: &now}); err != nil {
			return nil, err
		}
		if err := s.record(ctx, tx, SystemActor, EventInvocationNotDispatched, taskID, id, map[string]any{"reason": r}); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// withdrawWaiting ends the task's requests that wait for a person, in the
// transaction that cancels the task and under its lock: each becomes not
// dispatched (task_cancelled) with its audit event, and any agent's claim
// on its card is released. The customer's link then shows the end state.
// The caller locked the waiting requests before the task
// (lockWaitingFirst), so none being decided at that moment is passed over;
// the skip here only passes over a request proposed after that and
// locked by a decision now waiting for the task.
func (s *Service) withdrawWaiting(ctx context.Context, tx *store.Tx, taskID string) ([]string, error) {
	waiting, err := tx.LockWaitingOfTask(ctx, taskID, true)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(waiting))
	for _, w := range waiting {
		if err := s.withdrawOne(ctx, tx, w); err != nil {
			return nil, err
		}
		ids = append(ids, w.ID)
	}
	return ids, tx.ReleaseClaims(ctx, ids)
}

// The event data keys of a cancel's withdrawals. Each has one type.
const (
	// DataWithdrawnIDs, on task.cancelled, lists the ids of the requests
	// the cancel withdrew while they waited for a person.
	DataWithdrawnIDs = "withdrawn_ids"
	// DataWithdrawn, true on invocation.not_dispatched, says the request
	// was withdrawn while it waited for a person, not stopped approved.
	DataWithdrawn = "withdrawn"
)

// lockWaitingFirst locks the task's requests that wait for a person before
// a cancellation takes the task's lock. The lock order of every path that
// takes more than one is: the exposure's advisory locks, then the
// request's row, then the task's row. Every decision on such a request
// (a confirmation, an approval, a first of two approvals, an expiry, a
// fresh quote, an edit) locks the request and then the task, so the
// cancellation takes them in the same order: it waits for a decision
// under way to commit and then finds the request decided, or it holds the
// request and the decision finds it withdrawn. Whichever commits first,
// the other sees its result.
func lockWaitingFirst(ctx context.Context, tx *store.Tx, taskID string) error {
	_, err := tx.LockWaitingOfTask(ctx, taskID, false)
	return err
}

// withdrawOne moves one waiting request of a cancelled task to not
// dispatched, guarded by the state and version it was locked in.
func (s *Service) withdrawOne(ctx context.Context, tx *store.Tx, w store.WaitingOfTask) error {
	r := string(ReasonTaskCancelled)
	now := s.now()
	if _, err := tx.TransitionInvocation(ctx, w.ID, []string{w.State}, w.Version, string(NotDispatched), now,
		store.InvocationChange{NotDispatchedReason: &r, FinishedAt: &now}); err != nil {
		return err
	}
	return s.record(ctx, tx, SystemActor, EventInvocationNotDispatched, w.TaskID, w.ID, map[string]any{
		"reason": r, "was": w.State, DataWithdrawn: true})
}

// withdrawCancelled withdraws requests still waiting for a person in a
// cancelled task, and returns how many. The cancellation itself ends every
// request waiting when it commits; this sweep is the net for one that a
// path not serialised with it (a fresh quote's successor, say) left
// waiting after it.
func (s *Service) withdrawCancelled(ctx context.Context) (int, error) {
	rows, err := s.store.WaitingOfCancelledTasks(ctx, 500)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, w := range rows {
		err := s.store.InTx(ctx, func(tx *store.Tx) error {
			// The request, then its task: the order decisions take them.
			if err := lockWaitingFirst(ctx, tx, w.TaskID); err != nil {
				return err
			}
			task, err := tx.LockTask(ctx, w.TaskID)
			if err != nil {
				return err
			}
			if task.State != string(TaskCancelled) {
				return store.ErrConflict
			}
			if err := s.withdrawOne(ctx, tx, w); err != nil {
				return err
			}
			return tx.ReleaseClaims(ctx, []string{w.ID})
		})
		if errors.Is(err, store.ErrConflict) {
			continue // decided or withdrawn meanwhile
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
