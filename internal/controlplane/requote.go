package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/tracing"
	"countersign/store"
)

// Requoted is what a fresh quote on a customer's confirm did
// (requoteLoaded).
type Requoted struct {
	// Current is the invocation the customer decides on now: the one asked
	// about when its target is unchanged, else its successor with the fresh
	// quote. It is zero when the action can no longer be done at all.
	Current Invocation
	// Previous is the superseded invocation when the target changed.
	Previous *Invocation
	// Changed says the target changed since the quote was shown.
	Changed bool
	// Refusal is the adapter's reason when the fresh dry-run refused the
	// action: the old invocation is closed and nothing replaces it.
	Refusal *adapter.Error
}

// requoteLoaded re-runs the dry-run of row, awaiting the customer's
// confirmation, and compares the target's version with the quote's. When
// the target is unchanged it returns the invocation as it is. When it
// changed, one transaction closes the old invocation (rejected, reason
// "superseded: …", so it can never execute) and inserts its successor with
// the fresh quote, a new idempotency key and supersedes_id set, awaiting
// confirmation again. When the fresh dry-run refuses, the old one is closed
// the same way and Refusal says why. A concurrent fresh quote that already
// superseded it yields the successor. CustomerDecide asks for it on a
// confirm, once row and task are read and the customer authorised; the
// dry-run runs outside any transaction, and closing row is guarded by its
// version. A successor is a new write: when the task no longer takes
// writes or the action's policy is off by the time the fresh quote is back
// (mayRecord), the request is refused and nothing changes.
func (s *Service) requoteLoaded(ctx context.Context, actor Actor, row store.Invocation, task store.Task) (Requoted, error) {
	inv, err := fromRow(row)
	if err != nil {
		return Requoted{}, err
	}
	if inv.State != AwaitingConfirmation {
		return s.successorOrSelf(ctx, inv)
	}
	sys, err := s.registry.System(inv.System)
	if err != nil {
		return Requoted{}, adapterErr(err)
	}
	quoteCtx, span := tracing.Stage(ctx, "quote", inv.ID, inv.TaskID, "requote", "true")
	quote, err := sys.DryRun(quoteCtx, adapter.Principal{CustomerRef: task.CustomerRef}, inv.Action, inv.Call().Args)
	span.End()
	var refusal *adapter.Error
	if err != nil {
		ae, ok := adapter.AsError(err)
		if !ok || ae.Outcome != adapter.Refused {
			return Requoted{}, adapterErr(err)
		}
		refusal = ae
	} else if quote.Target.Version == inv.Quote.Target.Version {
		return Requoted{Current: inv}, nil
	}
	return s.supersede(ctx, actor, inv, row, task, quote, refusal)
}

func (s *Service) supersede(ctx context.Context, actor Actor, old Invocation, row store.Invocation, task store.Task, quote adapter.Quote, refusal *adapter.Error) (Requoted, error) {
	reason := fmt.Sprintf(supersededPrefix+"the %s changed after the quote was shown", old.Target.Kind)
	if refusal != nil {
		reason += ", and the action can no longer be done: " + refusal.Message
	}
	var out Requoted
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		// The locks in their order (lockWaitingFirst): the exposure's,
		// the request's, then the task's. A successor is a new write, so
		// what admits one is checked again under them, after the dry run.
		if refusal == nil && quote.AmountCents != nil {
			if err := lockExposure(ctx, tx, objectOf(old.System, quote.Target), old.Action, task.CustomerRef, true); err != nil {
				return err
			}
		}
		_, st, err := s.lockForChange(ctx, tx, actor, old, "requote", refusal == nil)
		if err != nil {
			return err
		}
		now := s.now()
		closed, err := tx.TransitionInvocation(ctx, old.ID, []string{string(AwaitingConfirmation)}, old.Version, string(Rejected), now,
			store.InvocationChange{DecisionReason: &reason, FinishedAt: &now})
		if errors.Is(err, store.ErrConflict) {
			return errRaced
		}
		if err != nil {
			return err
		}
		prev, err := fromRow(closed)
		if err != nil {
			return err
		}
		out.Previous, out.Changed, out.Refusal = &prev, true, refusal
		data := map[string]any{"reason": reason, "quoted_version": old.Quote.Target.Version}
		if refusal != nil {
			data["code"] = refusal.Code
			return s.record(ctx, tx, actor, EventInvocationSuperseded, old.TaskID, old.ID, data)
		}
		data["current_version"] = quote.Target.Version
		next, err := s.insertSuccessor(ctx, tx, old, row, task, policyFromRow(*st.Policy), quote, now)
		if err != nil {
			return err
		}
		out.Current = next
		data["successor"] = next.ID
		if err := s.record(ctx, tx, actor, EventInvocationSuperseded, old.TaskID, old.ID, data); err != nil {
			return err
		}
		return s.record(ctx, tx, SystemActor, EventInvocationRequoted, next.TaskID, next.ID, map[string]any{
			"supersedes": old.ID, "target": next.Target.Display, "amount_cents": next.AmountCents, "reason": next.RouteReason,
			"title": next.Quote.Title, "currency": next.Quote.Currency})
	})
	if errors.Is(err, errRaced) {
		inv, err := s.Invocation(ctx, old.ID)
		if err != nil {
			return Requoted{}, err
		}
		return s.successorOrSelf(ctx, inv)
	}
	return out, err
}

// errRaced says another request moved the invocation first.
var errRaced = errors.New("controlplane: invocation changed meanwhile")

// insertSuccessor records old's successor with the fresh quote, routed by
// policy, read share-locked in this transaction, under the exposure's
// lock when the quote has an amount.
func (s *Service) insertSuccessor(ctx context.Context, tx *store.Tx, old Invocation, row store.Invocation, task store.Task, policy Policy, quote adapter.Quote, now time.Time) (Invocation, error) {
	// The successor is a proposal like any other: it routes with what moved
	// or is pending on the customer and object (the invocation it replaces,
	// closed above, no longer counts), counted under the exposure's lock
	// the caller took.
	var prior int64
	var u unlike
	if quote.AmountCents != nil {
		var err error
		if prior, u, err = s.priorExposure(ctx, tx, policy, objectOf(row.System, quote.Target), row.Action, task.CustomerRef, "", quote.Currency); err != nil {
			return Invocation{}, err
		}
	}
	route := routeOf(policy, quote.AmountCents, prior, u, old.CompensatesID != "")
	if route.State != AwaitingApproval {
		// The customer is the one deciding: a re-quote never skips them.
		route = Route{State: AwaitingConfirmation, Reason: "re-quoted: the customer confirms the fresh quote", Window: policy.ConfirmationWindow}
	}
	quoteJSON, err := json.Marshal(quote)
	if err != nil {
		return Invocation{}, err
	}
	id := newID("inv")
	deadline := now.Add(route.Window)
	next := store.Invocation{ID: id, TaskID: row.TaskID, ConversationID: row.ConversationID, System: row.System,
		Action: row.Action, TargetKind: quote.Target.Kind, TargetID: quote.Target.ID, TargetDisplay: quote.Target.Display,
		TargetVersion: quote.Target.Version, State: string(route.State), ProposedArgs: row.ProposedArgs, ArgsHash: row.ArgsHash,
		ApprovedArgs: row.ApprovedArgs, ApprovedArgsHash: row.ApprovedArgsHash,
		Quote: quoteJSON, Summary: row.Summary, IdempotencyKey: idempotencyKey(row.TaskID, id),
		AmountCents: quote.AmountCents, PolicyStage: int16(policy.Stage), PolicyVersion: policy.Version,
		RouteReason: route.Reason, ExposureCents: prior, DeadlineAt: &deadline, CompensatesID: row.CompensatesID, SupersedesID: &row.ID, CreatedAt: now}
	inserted, err := tx.InsertInvocation(ctx, next)
	if err != nil {
		return Invocation{}, err
	}
	if err := s.mintLink(ctx, tx, inserted, task.CustomerRef); err != nil {
		return Invocation{}, err
	}
	return fromRow(inserted)
}

// successorOrSelf answers a fresh quote of an invocation that is no longer
// awaiting confirmation: its successor when one superseded it, else itself
// as it stands.
func (s *Service) successorOrSelf(ctx context.Context, inv Invocation) (Requoted, error) {
	row, err := s.store.Successor(ctx, inv.ID)
	if errors.Is(err, store.ErrNotFound) {
		return Requoted{Current: inv}, nil
	}
	if err != nil {
		return Requoted{}, err
	}
	next, err := fromRow(row)
	if err != nil {
		return Requoted{}, err
	}
	return Requoted{Current: next, Previous: &inv, Changed: true}, nil
}

// ErrNoSuccessor says no invocation superseded the one asked about.
var ErrNoSuccessor = errors.New("controlplane: no successor")

// Successor returns the invocation that superseded id after its target
// changed, or ErrNoSuccessor.
func (s *Service) Successor(ctx context.Context, id string) (Invocation, error) {
	row, err := s.store.Successor(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Invocation{}, ErrNoSuccessor
	}
	if err != nil {
		return Invocation{}, err
	}
	return fromRow(row)
}
