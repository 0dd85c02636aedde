package controlplane

import (
	"context"
	"encoding/hex"
	"strings"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// loadRequest reads invocation id and its task in tx, the one read of
// both a decision makes; lockTask locks the task row for the transaction.
func loadRequest(ctx context.Context, tx *store.Tx, id string, lockTask bool) (store.Invocation, store.Task, error) {
	row, err := tx.Invocation(ctx, id)
	if err != nil {
		return store.Invocation{}, store.Task{}, err
	}
	read := tx.Task
	if lockTask {
		read = tx.LockTask
	}
	task, err := read(ctx, row.TaskID)
	if err != nil {
		return store.Invocation{}, store.Task{}, err
	}
	return row, task, nil
}

// approveRow approves row, read (with its task) earlier in this request
// and already authorised. The transition is guarded by expectedVersion: a
// caller that read row before a call outside the transaction passes
// row.Version, so a row that changed since is a conflict, not a decision
// on what the decider did not see.
func (s *Service) approveRow(ctx context.Context, tx *store.Tx, actor Actor, row store.Invocation, task store.Task, expectedVersion int32, from State, verb string, event EventAction) (Invocation, error) {
	var out Invocation
	id := row.ID
	now := s.now()
	if row.State == string(from) && row.DeadlineAt != nil && now.After(*row.DeadlineAt) {
		return out, apperr.New(apperr.IllegalTransition, "This request expired before it was decided.")
	}
	args, hash := row.ApprovedArgs, row.ApprovedArgsHash
	if args == nil {
		args, hash = row.ProposedArgs, row.ArgsHash
	}
	if row.State == string(from) && !now.Before(task.ExpiresAt) {
		return s.endForExpiredTask(ctx, tx, row, from, expectedVersion, verb, now)
	}
	if row.State == string(from) {
		// The route is checked again under the policy in force now: a
		// tightened policy holds for what is pending.
		rc, found, err := s.recheckRow(ctx, tx, row, task.CustomerRef)
		if err != nil {
			return out, err
		}
		if found && rc.need > byCustomer {
			err := s.reroute(ctx, tx, actor, row, expectedVersion, event, hash, rc, &out)
			return out, err
		}
	}
	updated, err := tx.TransitionInvocation(ctx, id, []string{string(from)}, expectedVersion, string(Approved), now,
		store.InvocationChange{ApprovedArgs: args, ApprovedArgsHash: hash, ApprovedAt: &now})
	if err != nil {
		return out, s.transitionErr(ctx, tx, id, expectedVersion, verb, err)
	}
	if out, err = fromRow(updated); err != nil {
		return out, err
	}
	if err := s.record(ctx, tx, actor, event, out.TaskID, id, map[string]any{"args_hash": hex.EncodeToString(hash)}); err != nil {
		return out, err
	}
	return out, tx.Notify(ctx, store.DispatchChannel, id)
}

// endForExpiredTask ends row, whose task expired before the decision now
// being made on it, instead of recording the yes: the request moves from
// from to not_dispatched (task_expired) with its audit event, and is the
// decision's result, not an error, so the decider sees the end state and
// nobody is told it is being carried out. An expired task takes no permit,
// so a yes recorded now would only be stopped there. The transition is
// guarded by expectedVersion, as the yes would have been.
func (s *Service) endForExpiredTask(ctx context.Context, tx *store.Tx, row store.Invocation, from State, expectedVersion int32, verb string, now time.Time) (Invocation, error) {
	r := string(ReasonTaskExpired)
	updated, err := tx.TransitionInvocation(ctx, row.ID, []string{string(from)}, expectedVersion, string(NotDispatched), now,
		store.InvocationChange{NotDispatchedReason: &r, FinishedAt: &now})
	if err != nil {
		return Invocation{}, s.transitionErr(ctx, tx, row.ID, expectedVersion, verb, err)
	}
	out, err := fromRow(updated)
	if err != nil {
		return out, err
	}
	return out, s.record(ctx, tx, SystemActor, EventInvocationNotDispatched, out.TaskID, out.ID, map[string]any{
		"reason": r, "was": string(from)})
}

// ReasonTooLong is the code of a decline's reason over its length
// (apperr.Error.FieldCodes["reason"]).
const ReasonTooLong = "reason_too_long"

// declineReason is reason trimmed, or the refusal of a reason too long.
func declineReason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	if len(reason) > 1000 {
		return "", apperr.InvalidField("reason", ReasonTooLong, "use at most 1000 characters", nil)
	}
	return reason, nil
}

// declineRow moves invocation id from from to rejected with reason.
func (s *Service) declineRow(ctx context.Context, tx *store.Tx, actor Actor, id string, expectedVersion int32, from State, verb string, event EventAction, reason string) (Invocation, error) {
	now := s.now()
	updated, err := tx.TransitionInvocation(ctx, id, []string{string(from)}, expectedVersion, string(Rejected), now,
		store.InvocationChange{DecisionReason: &reason, FinishedAt: &now})
	if err != nil {
		return Invocation{}, s.transitionErr(ctx, tx, id, expectedVersion, verb, err)
	}
	out, err := fromRow(updated)
	if err != nil {
		return out, err
	}
	return out, s.record(ctx, tx, actor, event, out.TaskID, id, map[string]any{"reason": reason})
}
