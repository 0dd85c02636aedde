package controlplane

import (
	"context"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/tracing"
	"countersign/store"
)

// permit is the outcome of asking for a dispatch permit.
type permit int

const (
	permitGranted  permit = iota
	permitRefused         // the invocation became not_dispatched
	permitDeferred        // in-flight or rate limit: try again later
)

// grant is a claimed invocation with what its send needs: the lease token
// of a granted permit and the task's customer, read under the task's lock
// (so the send needs no query of its own for them).
type grant struct {
	inv       Invocation
	lease     string
	principal adapter.Principal
	// started says the permit's own transaction started the send (a
	// direct send): no startSend follows.
	started bool
}

func (s *Service) nextPermit(ctx context.Context, skip []string) (*grant, permit, error) {
	return s.permitFor(ctx, func(tx *store.Tx) ([]store.Invocation, error) { return tx.ClaimApproved(ctx, skip) })
}

// permitFor claims one invocation and, in the same transaction holding the
// task's lock, decides its permit: the task active and unexpired, the
// global stop off, the policy still enabled and its route (checked again
// with the exposure) satisfied by who approved, the budget not spent, the
// in-flight and rate limits open. A granted permit spends one write of the
// budget and moves the row to dispatching before anything is sent, under a
// lease whose token it returns: only the holder of that token may send the
// request (startSend) and record its outcome (finish).
func (s *Service) permitFor(ctx context.Context, claim func(*store.Tx) ([]store.Invocation, error)) (*grant, permit, error) {
	var out *grant
	var result permit
	began := time.Now()
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		rows, err := claim(tx)
		if err != nil || len(rows) == 0 {
			return err
		}
		row := rows[0]
		task, err := tx.LockTask(ctx, row.TaskID)
		if err != nil {
			return err
		}
		now := s.now()
		reason, defer_, err := s.permitCheck(ctx, tx, row, task, now)
		if err != nil {
			return err
		}
		switch {
		case defer_:
			inv, err := fromRow(row)
			out, result = &grant{inv: inv}, permitDeferred
			return err
		case reason != "":
			inv, err := fromRow(row)
			if err != nil {
				return err
			}
			out, result = &grant{inv: inv}, permitRefused
			r := string(reason)
			if _, err := tx.TransitionInvocation(ctx, row.ID, []string{string(Approved)}, row.Version, string(NotDispatched), now,
				store.InvocationChange{NotDispatchedReason: &r, FinishedAt: &now}); err != nil {
				return err
			}
			return s.record(ctx, tx, SystemActor, EventInvocationNotDispatched, row.TaskID, row.ID, map[string]any{"reason": r})
		}
		out, err = s.grantPermit(ctx, tx, row, task, now, false)
		result = permitGranted
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	if result == permitRefused {
		tracing.Done(ctx, "permit", out.inv.ID, out.inv.TaskID, began, "permit", "refused", "state", string(NotDispatched))
	}
	return out, result, nil
}

// grantPermit grants row's permit, in the transaction holding its task's
// lock, once permitCheck found nothing against it: it spends one write of
// the budget and moves the row to dispatching under a new lease, whose
// token only the returned grant holds. started says the request leaves
// right after this commit, from the same process (a direct send): the
// lease is then the one it leaves under, and dispatch.started is
// journaled here rather than by startSend.
func (s *Service) grantPermit(ctx context.Context, tx *store.Tx, row store.Invocation, task store.Task, now time.Time, started bool) (*grant, error) {
	if err := tx.UseWrite(ctx, task.ID, now); err != nil {
		return nil, err
	}
	lease := now.Add(s.lease())
	leaseToken := newID("lease")
	updated, err := tx.TransitionInvocation(ctx, row.ID, []string{string(Approved)}, row.Version, string(Dispatching), now,
		store.InvocationChange{PermitAt: &now, LeaseUntil: &lease, LeaseToken: &leaseToken, EffectiveArgs: row.ApprovedArgs})
	if err != nil {
		return nil, err
	}
	inv, err := fromRow(updated)
	if err != nil {
		return nil, err
	}
	entries := []entry{{actor: SystemActor, action: EventPermitGranted, taskID: row.TaskID, invocation: row.ID, data: map[string]any{
		"writes_used": task.WritesUsed + 1, "write_budget": task.WriteBudget, "lease_until": lease}}}
	if started {
		entries = append(entries, entry{actor: SystemActor, action: EventDispatchStarted, taskID: row.TaskID, invocation: row.ID,
			data: map[string]any{"lease_until": lease}})
	}
	if err := s.recordAll(ctx, tx, entries...); err != nil {
		return nil, err
	}
	return &grant{inv: inv, lease: leaseToken, principal: adapter.Principal{CustomerRef: task.CustomerRef}, started: started}, nil
}

func (s *Service) permitCheck(ctx context.Context, tx *store.Tx, row store.Invocation, task store.Task, now time.Time) (NotDispatchedReason, bool, error) {
	if reason := taskStateReason(TaskState(task.State)); reason != "" {
		return reason, false, nil
	}
	if !now.Before(task.ExpiresAt) {
		return ReasonTaskExpired, false, nil
	}
	// The stop, the policy (both share-locked) and the task's load, in one
	// round trip.
	reads, err := tx.PermitReads(ctx, row.System, row.Action, task.ID, now.Add(-time.Minute))
	if err != nil {
		return "", false, err
	}
	if reads.Stopped {
		return ReasonGlobalStop, false, nil
	}
	if reads.Policy == nil || !reads.Policy.Enabled {
		return ReasonPolicyDisabled, false, nil
	}
	// The route is checked again under the policy in force now: who
	// approved must be enough for what the route needs today, counting
	// only the people the policy lets decide now.
	rc, err := s.routeNow(ctx, tx, row, task.CustomerRef, policyFromRow(*reads.Policy))
	if err != nil {
		return "", false, err
	}
	if rc.need > byPolicy {
		got, err := decided(ctx, tx, row, rc.policy)
		if err != nil {
			return "", false, err
		}
		if got < rc.need && rc.unlike.code != "" {
			// Limits in another currency, or another currency on the
			// customer or object, came after the yes it has: the amount
			// is not compared, and the reason says so.
			return rc.unlike.notDispatched(), false, nil
		}
		if got < rc.need {
			return ReasonRouteChanged, false, nil
		}
	}
	if _, err := s.registry.System(row.System); err != nil {
		return ReasonNotConnected, false, nil
	}
	if task.WritesUsed >= task.WriteBudget {
		return ReasonBudgetSpent, false, nil
	}
	if reads.Inflight >= int(task.InflightLimit) || reads.PermitsSince >= int(task.RatePerMinute) {
		return "", true, nil
	}
	return "", false, nil
}

// taskStateReason is why nothing of a task in state st may be sent, or ""
// for an active task.
func taskStateReason(st TaskState) NotDispatchedReason {
	switch st {
	case TaskPaused:
		return ReasonTaskPaused
	case TaskCancelled:
		return ReasonTaskCancelled
	case TaskClosed:
		return ReasonTaskClosed
	}
	return ""
}
