package controlplane

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/tracing"
	"countersign/store"
)

// Approve is a person's approval of an invocation awaiting approval, by
// someone whose role the action's policy lets decide its cards (agents,
// unless the policy adds managers or admins: approvers.go); otherwise
// Forbidden, code role_may_not_approve. The approval binds to the
// arguments approved (the proposal's, unless an agent edited them). An
// assistant can never approve. Separation of duties applies (duties.go):
// above the policy's second-approver amount the first approval is
// recorded and a second, different person completes it; nobody approves
// the reversal of an invocation they approved.
func (s *Service) Approve(ctx context.Context, actor Actor, id string, expectedVersion int32) (Invocation, error) {
	return s.approveAsStaff(ctx, actor, id, expectedVersion, nil, nil)
}

// Confirm is the customer's confirmation of an invocation awaiting it; the
// customer must be the task's. The route is checked again first: when the
// policy in force now (or the exposure) needs an agent, the confirmation is
// recorded but sends nothing, and the invocation moves to the agents' queue
// (reroute).
func (s *Service) Confirm(ctx context.Context, actor Actor, id string, expectedVersion int32) (Invocation, error) {
	if actor.Kind != ActorCustomer || actor.Proof == "" {
		return Invocation{}, apperr.New(apperr.Forbidden, "Only the customer, once they proved who they are, can confirm this.")
	}
	return s.approve(ctx, actor, id, expectedVersion, AwaitingConfirmation, "confirm", EventInvocationConfirmed,
		func(ctx context.Context, tx *store.Tx, row store.Invocation, t store.Task) error {
			return customerMayDecide(ctx, tx, actor, row, t.CustomerRef)
		})
}

func (s *Service) approve(ctx context.Context, actor Actor, id string, expectedVersion int32, from State, verb string, event EventAction, check func(context.Context, *store.Tx, store.Invocation, store.Task) error) (Invocation, error) {
	var out Invocation
	began := time.Now()
	// The decision, the permit and the lease in one transaction when a
	// worker is free; the request leaves right after it commits.
	direct := s.reserveSend()
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		row, task, err := loadRequest(ctx, tx, id, false)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(ctx, tx, row, task); err != nil {
				return err
			}
		}
		if out, err = s.approveRow(ctx, tx, actor, row, task, expectedVersion, from, verb, event); err != nil {
			return err
		}
		out, err = direct.permitApproved(ctx, tx, out)
		return err
	})
	if err == nil {
		tracing.Done(ctx, "decide", out.ID, out.TaskID, began, "decision", verb, "actor", string(actor.Kind), "state", string(out.State))
	}
	if !direct.done(err) && err == nil {
		s.kick()
	}
	return out, err
}

// loadRequest reads invocation id and its task in tx, the one read of
// both a decision makes; lockTask locks the task row for the transaction.
func loadRequest(ctx context.Context, tx *store.Tx, id string, lockTask bool) (store.Invocation, store.Task, error) {
	row, err := tx.Invocation(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Invocation{}, store.Task{}, apperr.Wrap(err, apperr.NotFound, "No such invocation.")
	}
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

// Decline is the customer's refusal of an invocation awaiting their
// confirmation, with an optional reason the assistant sees.
func (s *Service) Decline(ctx context.Context, actor Actor, id string, expectedVersion int32, reason string) (Invocation, error) {
	if actor.Kind != ActorCustomer || actor.Proof == "" {
		return Invocation{}, apperr.New(apperr.Forbidden, "Only the customer, once they proved who they are, can decline this.")
	}
	return s.decline(ctx, actor, id, expectedVersion, AwaitingConfirmation, "decline", EventInvocationDeclined, reason,
		func(ctx context.Context, tx *store.Tx, row store.Invocation, t store.Task) error {
			return customerMayDecide(ctx, tx, actor, row, t.CustomerRef)
		})
}

func (s *Service) decline(ctx context.Context, actor Actor, id string, expectedVersion int32, from State, verb string, event EventAction, reason string, check func(context.Context, *store.Tx, store.Invocation, store.Task) error) (Invocation, error) {
	reason, err := declineReason(reason)
	if err != nil {
		return Invocation{}, err
	}
	var out Invocation
	began := time.Now()
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		if check != nil {
			row, task, err := loadRequest(ctx, tx, id, false)
			if err != nil {
				return err
			}
			if err := check(ctx, tx, row, task); err != nil {
				return err
			}
		}
		out, err = s.declineRow(ctx, tx, actor, id, expectedVersion, from, verb, event, reason)
		return err
	})
	if err == nil {
		tracing.Done(ctx, "decide", out.ID, out.TaskID, began, "decision", verb, "actor", string(actor.Kind), "state", string(out.State))
	}
	return out, err
}

// declineReason is reason trimmed, or the refusal of a reason too long.
func declineReason(reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	if len(reason) > 1000 {
		return "", apperr.InvalidFields(map[string]string{"reason": "use at most 1000 characters"})
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
