package controlplane

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/stepup"
	"countersign/internal/tracing"
	"countersign/store"
)

// approveAsStaff is a console user's approval with separation of duties:
// only a person whose role the action's policy lets decide its cards
// approves (approvers.go); an approver may not approve the reversal of an
// invocation they approved nor a request they proposed themselves; above
// the policy's second-approver amount (counting the exposure before it,
// under the policy in force now) the first approval is recorded (the
// invocation stays awaiting approval, its version moves) and a second,
// different person the policy lets decide completes it. When wantHash is
// set, the arguments must still hash to it. When the policy asks for
// step-up (counting the amount as the second approver does), each
// approval needs up, a passkey assertion of the approver's made for this
// version and these arguments (step_up.go), kept with the approval. The invocation row is locked
// first, so two approvers deciding at once are serialised: one decides,
// the other is told. When seen is set, it receives the request as read,
// for a refused form to show.
func (s *Service) approveAsStaff(ctx context.Context, actor Actor, id string, expectedVersion int32, wantHash []byte, up *stepup.Assertion, seen *Invocation) (Invocation, error) {
	if err := staffOnCard(actor, "approve"); err != nil {
		return Invocation{}, err
	}
	var out Invocation
	began := time.Now()
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		row, err := tx.LockInvocation(ctx, id)
		if err != nil {
			return err
		}
		if seen != nil {
			if *seen, err = fromRow(row); err != nil {
				return err
			}
		}
		policy, found, err := mayDecideIn(ctx, tx, actor, row, "approve")
		if err != nil {
			return err
		}
		if row.State != string(AwaitingApproval) || (expectedVersion != 0 && row.Version != expectedVersion) {
			return s.transitionErr(ctx, tx, id, expectedVersion, "approve", store.ErrConflict)
		}
		now := s.now()
		if row.DeadlineAt != nil && now.After(*row.DeadlineAt) {
			return apperr.New(apperr.IllegalTransition, "This request expired before it was decided.")
		}
		args, hash := row.ApprovedArgs, row.ApprovedArgsHash
		if args == nil {
			args, hash = row.ProposedArgs, row.ArgsHash
		}
		if wantHash != nil && !bytes.Equal(wantHash, hash) {
			return &apperr.Error{Kind: apperr.Conflict, Code: "args_changed",
				Message: "The arguments changed after you reviewed them; your approval was not recorded.",
				Hint:    "Read the request again and approve what it says now."}
		}
		if row.CompensatesID != nil {
			approvers, err := tx.ApproverUserIDs(ctx, *row.CompensatesID)
			if err != nil {
				return err
			}
			if slices.Contains(approvers, actor.ID) {
				return &apperr.Error{Kind: apperr.Forbidden, Code: "own_approval_reversal",
					Message: "You approved the request this one reverses; another person must approve the reversal.",
					Hint:    "Leave it for a colleague."}
			}
		}
		// A person who sent a request on themselves (an assistant's
		// hand-off draft), or whose own assistant proposed it, does not
		// also approve it: the policy's approval is another person's.
		if proposer, err := tx.ProposerUserID(ctx, id); err != nil {
			return err
		} else if proposer == actor.ID {
			return &apperr.Error{Kind: apperr.Forbidden, Code: "own_proposal",
				Message: "You proposed this request yourself (in the console or through your own assistant); another person must approve it.",
				Hint:    "Leave it for a colleague."}
		}
		task, err := tx.Task(ctx, row.TaskID)
		if err != nil {
			return err
		}
		// The second-approver rule counts the exposure, under the policy
		// in force now (read above, share-locked).
		if !now.Before(task.ExpiresAt) {
			out, err = s.endForExpiredTask(ctx, tx, row, AwaitingApproval, row.Version, "approve", now)
			return err
		}
		data := map[string]any{"args_hash": hex.EncodeToString(hash), "version": row.Version}
		two, needStepUp := false, false
		if found {
			rc, err := s.routeNow(ctx, tx, row, task.CustomerRef, policy)
			if err != nil {
				return err
			}
			// Step-up counts the amount as the second approver does: with
			// the exposure before it, under the policy in force now.
			two, needStepUp = rc.need == byTwoAgents, rc.needsStepUp()
		}
		su, err := checkStepUp(ctx, tx, actor, row, hash, up, needStepUp)
		if err != nil {
			return err
		}
		if su != nil {
			su.CreatedAt = now
			if err := tx.InsertStepUp(ctx, *su); err != nil {
				return err
			}
			actor = withStepUp(actor, su)
		}
		if two {
			done, err := s.firstApproval(ctx, tx, actor, row, policy, hash, &out)
			if err != nil || done {
				return err
			}
			data["second_approver"] = true
		}
		updated, err := tx.TransitionInvocation(ctx, id, []string{string(AwaitingApproval)}, row.Version, string(Approved), now,
			store.InvocationChange{ApprovedArgs: args, ApprovedArgsHash: hash, ApprovedAt: &now})
		if err != nil {
			return s.transitionErr(ctx, tx, id, expectedVersion, "approve", err)
		}
		if out, err = fromRow(updated); err != nil {
			return err
		}
		if err := s.record(ctx, tx, actor, EventInvocationApproved, out.TaskID, id, data); err != nil {
			return err
		}
		return tx.Notify(ctx, store.DispatchChannel, id)
	})
	if err == nil {
		tracing.Done(ctx, "decide", out.ID, out.TaskID, began, "decision", "approve", "actor", string(actor.Kind), "state", string(out.State))
	}
	if err == nil && out.State == Approved {
		s.kick()
	}
	return out, err
}

// needsSecondApprover reports whether an amount (with its exposure) is
// above the policy's second-approver threshold.
func needsSecondApprover(p Policy, amount *int64) bool {
	return p.SecondApproverAboveCents != nil && amount != nil && *amount > *p.SecondApproverAboveCents
}

// firstApproval records actor's approval when no other person has
// approved these arguments yet (done is true: the invocation waits for a
// second approver). When another person already has, done is false and
// the caller completes the approval. Only an approval by a person whose
// role policy p lets decide now counts as the other one: a manager's
// first approval, given while the policy let managers decide, counts no
// more once it does not.
func (s *Service) firstApproval(ctx context.Context, tx *store.Tx, actor Actor, row store.Invocation, p Policy, hash []byte, out *Invocation) (done bool, err error) {
	approvals, err := tx.ApprovalsOf(ctx, row.ID)
	if err != nil {
		return false, err
	}
	for _, a := range approvals {
		if bytes.Equal(a.ArgsHash, hash) && a.UserID != actor.UserID && p.roleCounts(a.Role) {
			return false, nil
		}
	}
	for _, a := range approvals {
		if bytes.Equal(a.ArgsHash, hash) && a.UserID == actor.UserID {
			return false, &apperr.Error{Kind: apperr.Forbidden, Code: "second_approver_required",
				Message: "You already approved this; a second, different person must approve it too.",
				Hint:    "Leave it for a colleague."}
		}
	}
	now := s.now()
	if err := tx.RecordApproval(ctx, row.ID, actor.UserID, hash, now); err != nil {
		return false, err
	}
	// The version moves so that a screen showing "no approval yet" is stale.
	updated, err := tx.TransitionInvocation(ctx, row.ID, []string{string(AwaitingApproval)}, row.Version, string(AwaitingApproval), now,
		store.InvocationChange{})
	if err != nil {
		return false, fmt.Errorf("controlplane: record first approval of %s: %w", row.ID, err)
	}
	if *out, err = fromRow(updated); err != nil {
		return false, err
	}
	return true, s.record(ctx, tx, actor, EventInvocationFirstApproval, row.TaskID, row.ID, map[string]any{
		"args_hash": hex.EncodeToString(hash), "amount_cents": *row.AmountCents, "version": row.Version})
}

// FirstApprovers lists the console users (ids) who recorded the first of
// two approvals of an invocation's current arguments and still count as
// one: their role is one the action's policy lets decide now.
func (s *Service) FirstApprovers(ctx context.Context, inv Invocation) ([]int64, error) {
	hash := inv.ArgsHash
	p, err := s.decisionPolicy(ctx, inv.System, inv.Action)
	if err != nil {
		return nil, err
	}
	var out []int64
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		approvals, err := tx.ApprovalsOf(ctx, inv.ID)
		if err != nil {
			return err
		}
		for _, a := range approvals {
			if (hash == nil || bytes.Equal(a.ArgsHash, hash)) && p.roleCounts(a.Role) {
				out = append(out, a.UserID)
			}
		}
		return nil
	})
	return out, err
}
