package controlplane

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/tracing"
	"countersign/store"
)

// Reconciliation is what inspecting an unverified invocation found.
type Reconciliation struct {
	Invocation Invocation
	Lookup     adapter.LookupResult
	Verify     *adapter.Verification
	// Conclusive is false when the evidence decided nothing: the invocation
	// stays unverified and a person takes it from here.
	Conclusive bool
}

// Reconcile inspects the original call of an unverified invocation by its
// idempotency key and reads the target back. It is read-only towards the
// business system: nothing is sent. On evidence of the effect it becomes
// completed; on evidence of a refusal, failed; otherwise it stays
// unverified (a missing record is not proof that nothing happened).
func (s *Service) Reconcile(ctx context.Context, actor Actor, id string) (Reconciliation, error) {
	inv, err := s.Invocation(ctx, id)
	if err != nil {
		return Reconciliation{}, err
	}
	task, err := s.Task(ctx, inv.TaskID)
	if err != nil {
		return Reconciliation{}, err
	}
	return s.ReconcileLoaded(ctx, actor, inv, task)
}

// ReconcileLoaded is Reconcile of inv and its task as the caller read and
// authorised them in this request (the API checks the task is the
// assistant's): nothing is read again, and the transition is guarded by
// inv.Version, so an invocation that moved since changes nothing.
func (s *Service) ReconcileLoaded(ctx context.Context, actor Actor, inv Invocation, task Task) (Reconciliation, error) {
	return s.reconcile(ctx, actor, inv, task, nil)
}

// sweepLook is one look of the reconciler's sweep (ReconcileDue): which
// attempt it is and whether it is the last. A look that settles nothing
// records an event only when it is the last, handing the invocation to a
// person; the sweep's row keeps the others.
type sweepLook struct {
	attempt int
	last    bool
}

// data is what the sweep adds to its look's event: who looked, and which
// look it was.
func (l *sweepLook) data(m map[string]any) map[string]any {
	if l != nil {
		m[DataBy], m["attempt"] = BySweep, l.attempt
	}
	return m
}

// DataBy names, in a reconcile event's data, who looked when it was not a
// person asking: BySweep, the reconciler's automatic sweep.
const (
	DataBy  = "by"
	BySweep = "sweep"
)

// reconcile is ReconcileLoaded, for a person (look nil) or the sweep.
func (s *Service) reconcile(ctx context.Context, actor Actor, inv Invocation, task Task, look *sweepLook) (Reconciliation, error) {
	if task.ID != inv.TaskID {
		return Reconciliation{}, fmt.Errorf("controlplane: reconcile %s with task %s, not its own %s", inv.ID, task.ID, inv.TaskID)
	}
	if inv.State != Unverified {
		return Reconciliation{}, &apperr.Error{Kind: apperr.IllegalTransition, Code: "illegal_transition",
			Message: fmt.Sprintf("Only an unverified invocation is reconciled; this one is %s.", inv.State.Label())}
	}
	sys, err := s.registry.System(inv.System)
	if err != nil {
		return Reconciliation{}, adapterErr(err)
	}
	ctx, span := tracing.Stage(ctx, "reconcile", inv.ID, inv.TaskID)
	defer span.End()
	principal := adapter.Principal{CustomerRef: task.CustomerRef}
	callCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	found, err := sys.Lookup(callCtx, principal, inv.Call())
	if err != nil {
		return Reconciliation{}, adapterErr(err)
	}
	rec := Reconciliation{Lookup: found}
	to := Unverified
	var o outcome
	var evidence string
	switch {
	case found.Result != nil:
		v, err := sys.Verify(callCtx, principal, inv.Call(), found.Result)
		if err != nil {
			return Reconciliation{}, adapterErr(err)
		}
		rec.Verify = &v
		switch {
		case v.Verified:
			to, o, evidence = Completed, outcome{result: found.Result, verification: &v}, v.Evidence
		case found.NotApplied != nil && len(found.Effects) == 0:
			// The system answered done, but its authoritative record holds
			// nothing under the key and the read-back finds nothing: it
			// was not applied.
			to, o, evidence = Failed, outcome{verification: &v, err: found.NotApplied, notApplied: true}, found.NotApplied.Message
		}
	case found.LedgerState == "refused" && found.Error != nil && found.Error.Outcome != adapter.Unknown && len(found.Effects) == 0:
		to, o, evidence = Failed, outcome{err: found.Error}, found.Error.Message
	case found.NotApplied != nil && len(found.Effects) == 0:
		// The system's authoritative record says the call never took
		// effect: failed, and the ledger says so too, so a repeat of the
		// key sends nothing.
		to, o, evidence = Failed, outcome{err: found.NotApplied, notApplied: true}, found.NotApplied.Message
	case !found.Found && found.Kept && len(found.Effects) == 0:
		// The adapter claims each key in the request ledger before its
		// call leaves: no row is a call never begun (its permit's lease
		// ran out first). Closing the key where it is settled makes sure
		// it never will be.
		ae := &adapter.Error{Code: adapter.CodeNotApplied, Outcome: adapter.Refused,
			Message: "Countersign's request ledger has no call under this request's key: it never left, and now it never will.",
			Hint:    "Propose the action again if it is still wanted."}
		to, o, evidence = Failed, outcome{err: ae, neverBegun: true}, ae.Message
	}
	lookupJSON, _ := json.Marshal(found)
	var lookupData map[string]any
	_ = json.Unmarshal(lookupJSON, &lookupData)
	if to == Unverified {
		if look != nil && !look.last {
			rec.Invocation = inv
			return rec, nil
		}
		err = s.store.InTx(ctx, func(tx *store.Tx) error {
			return s.record(ctx, tx, actor, EventInvocationReconcileInconclusive, inv.TaskID, inv.ID, look.data(map[string]any{
				"lookup": lookupData, "handed_to_person": true}))
		})
		rec.Invocation = inv
		return rec, err
	}
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		now := s.now()
		ch := store.InvocationChange{FinishedAt: &now}
		if o.result != nil {
			ch.Result, _ = json.Marshal(o.result)
		}
		if o.verification != nil {
			ch.Verification, _ = json.Marshal(o.verification)
		}
		if o.err != nil {
			ch.Error, _ = json.Marshal(o.err)
		} else {
			// The outcome is known now: the "outcome unknown, do not retry"
			// error no longer holds. The events keep the history.
			ch.Error = json.RawMessage("null")
		}
		if o.neverBegun {
			argsHash := sha256.Sum256(inv.Call().Args)
			closed, err := tx.CloseAdapterRequest(ctx, inv.System, inv.IdempotencyKey, inv.Action, inv.Target.ID, argsHash[:], ch.Error, now)
			if err != nil {
				return err
			}
			if !closed {
				return errBegunMeanwhile
			}
		}
		updated, err := tx.TransitionInvocation(ctx, inv.ID, []string{string(Unverified)}, inv.Version, string(to), now, ch)
		if err != nil {
			return s.transitionErr(ctx, tx, inv.ID, inv.Version, "reconcile", err)
		}
		if o.notApplied {
			if err := tx.FinishAdapterRequest(ctx, inv.System, inv.IdempotencyKey, "refused", nil, ch.Error, now); err != nil {
				return err
			}
		}
		if err := s.record(ctx, tx, actor, EventInvocationReconciled, inv.TaskID, inv.ID, look.data(map[string]any{
			"to": string(to), "lookup": lookupData, "evidence": evidence, "code": errCode(o.err)})); err != nil {
			return err
		}
		if to == Completed && updated.CompensatesID != nil {
			if err := s.markReversed(ctx, tx, *updated.CompensatesID, inv.ID); err != nil {
				return err
			}
		}
		rec.Invocation, err = fromRow(updated)
		return err
	})
	if errors.Is(err, errBegunMeanwhile) {
		// A late call claimed the key after the lookup: look again.
		rec.Invocation = inv
		return rec, nil
	}
	rec.Conclusive = err == nil
	return rec, err
}

// errBegunMeanwhile: a call claimed the key between the lookup that found
// none and the transaction that was to close it.
var errBegunMeanwhile = errors.New("controlplane: a call was begun under the key meanwhile")

// errCode is err's code, "" without one.
func errCode(err *adapter.Error) string {
	if err == nil {
		return ""
	}
	return err.Code
}

// markReversed moves the invocation a completed compensation undid to
// reversed, in the compensation's transaction.
func (s *Service) markReversed(ctx context.Context, tx *store.Tx, originalID, compensationID string) error {
	orig, err := tx.TransitionInvocation(ctx, originalID, []string{string(Completed)}, 0, string(Reversed), s.now(), store.InvocationChange{})
	if errors.Is(err, store.ErrConflict) {
		return nil // already reversed, or not completed: nothing to mark
	}
	if err != nil {
		return err
	}
	return s.record(ctx, tx, SystemActor, EventInvocationReversed, orig.TaskID, originalID, map[string]any{"by": compensationID})
}
