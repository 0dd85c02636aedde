package controlplane

import (
	"context"
	"encoding/json"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/tracing"
	"countersign/store"
)

// send makes the one call this invocation gets, as the holder of lease,
// and records its outcome; it reports whether the adapter was called. Nothing
// here retries a write: a refusal is failed, a stale target or a request
// that never left is not dispatched, anything else unknown is unverified.
// A worker that no longer holds a current lease when the request would
// leave sends nothing (startSend).
func (s *Service) send(ctx context.Context, g grant) bool {
	inv, lease, principal := g.inv, g.lease, g.principal
	tracing.Done(ctx, "permit", inv.ID, inv.TaskID, time.Now(), "permit", "granted")
	ctx, span := tracing.Stage(ctx, "send", inv.ID, inv.TaskID, "system", inv.System, "action", inv.Action)
	defer span.End()
	sys, err := s.registry.System(inv.System)
	if err != nil {
		s.finish(ctx, inv, lease, NotDispatched, outcome{reason: ReasonNotConnected})
		return false
	}
	if !g.started {
		if s.hooks.beforeStart != nil {
			s.hooks.beforeStart(inv.ID)
		}
		if !s.startSend(ctx, inv, lease) {
			return false
		}
	}
	// The adapter's request ledger hands its record of the call's outcome
	// to finish, which writes it with the invocation's: one commit after
	// the request, not two.
	var ledger adapter.LedgerOutcomes
	callCtx, cancel := context.WithTimeout(adapter.WithLedgerOutcomes(ctx, &ledger), s.cfg.CallTimeout)
	result, err := sys.Execute(callCtx, principal, inv.Call())
	cancel()
	if err != nil {
		o := outcome{ledger: ledger.Take()}
		ae, ok := adapter.AsError(err)
		switch {
		case ok && ae.Code == adapter.CodeStaleTarget:
			o.reason, o.err = ReasonTargetChanged, ae
			s.finish(ctx, inv, lease, NotDispatched, o)
		case ok && ae.Outcome == adapter.NotSent:
			o.reason, o.err = ReasonUnreachable, ae
			s.finish(ctx, inv, lease, NotDispatched, o)
		case ok && ae.Outcome == adapter.Refused:
			o.err = ae
			s.finish(ctx, inv, lease, Failed, o)
		case ok:
			o.err = ae
			s.finish(ctx, inv, lease, Unverified, o)
		default:
			o.err = adapter.Unknowable(err)
			s.finish(ctx, inv, lease, Unverified, o)
		}
		return true
	}
	recorded := ledger.Take()
	verifyCtx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	verifyCtx, verifySpan := tracing.Stage(verifyCtx, "verify", inv.ID, inv.TaskID)
	v, err := sys.Verify(verifyCtx, principal, inv.Call(), &result)
	verifySpan.End()
	cancel()
	if err != nil {
		v = adapter.Verification{Evidence: "The read-back failed: " + err.Error(), At: s.now()}
	}
	if !v.Verified {
		s.finish(ctx, inv, lease, Unverified, outcome{result: &result, verification: &v, ledger: recorded, err: &adapter.Error{
			Code: "not_verified", Outcome: adapter.Unknown, Message: "The system accepted the request, but reading back did not find the change.",
			Hint: "Do not retry. A person will check the original request."}})
		return true
	}
	s.finish(ctx, inv, lease, Completed, outcome{result: &result, verification: &v, ledger: recorded})
	return true
}

type outcome struct {
	result       *adapter.Result
	verification *adapter.Verification
	err          *adapter.Error
	reason       NotDispatchedReason
	// ledger is what the adapter's request ledger would have recorded of
	// the call on its own (adapter.LedgerOutcomes).
	ledger []adapter.LedgerOutcome
	// notApplied: reconcile settles a call the system's authoritative
	// record never took (adapter.LookupResult.NotApplied) and records it
	// in the request ledger.
	notApplied bool
	// neverBegun: reconcile settles a call the request ledger never had
	// (adapter.LookupResult.Kept) and closes its key there.
	neverBegun bool
}

// finish records a dispatch's outcome, for the holder of lease only. It
// also accepts an invocation the sweeper already made unverified: a
// definite outcome found by the worker is evidence. A completed
// compensation reverses what it compensates.
func (s *Service) finish(ctx context.Context, inv Invocation, lease string, to State, o outcome) {
	ctx = context.WithoutCancel(ctx)
	tracing.Outcome(ctx, string(to))
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		now := s.now()
		ch := store.InvocationChange{FinishedAt: &now}
		data := map[string]any{"system": inv.System}
		if o.result != nil {
			ch.Result, _ = json.Marshal(o.result)
			data["reference"], data["short_reference"] = o.result.Reference, o.result.ShortReference
		}
		if o.verification != nil {
			ch.Verification, _ = json.Marshal(o.verification)
			data["evidence"] = o.verification.Evidence
		}
		if o.err != nil {
			ch.Error, _ = json.Marshal(o.err)
			data["code"], data["retryable"], data["message"] = o.err.Code, o.err.Retryable, o.err.Message
		}
		if o.reason != "" {
			r := string(o.reason)
			ch.NotDispatchedReason = &r
			data["reason"] = r
		}
		from := []string{string(Dispatching)}
		if to != Unverified {
			from = append(from, string(Unverified))
		}
		updated, err := tx.TransitionHeldInvocation(ctx, inv.ID, lease, from, string(to), now, ch)
		if err != nil {
			return err
		}
		for _, l := range o.ledger {
			if err := tx.FinishAdapterRequest(ctx, l.System, l.Key, l.State, l.Result, l.Error, l.At); err != nil {
				return err
			}
		}
		if err := s.record(ctx, tx, SystemActor, to.entered(), inv.TaskID, inv.ID, data); err != nil {
			return err
		}
		// A slot of the task's in-flight limit is free again: wake the
		// dispatchers for work they deferred.
		if err := tx.Notify(ctx, store.DispatchChannel, inv.TaskID); err != nil {
			return err
		}
		if to == Completed && updated.CompensatesID != nil {
			return s.markReversed(ctx, tx, *updated.CompensatesID, inv.ID)
		}
		return nil
	})
	if err != nil {
		s.log.Error("dispatch: record outcome", "invocation", inv.ID, "state", to, "error", err)
		// The ledger's record stands on its own: whatever became of the
		// invocation's, the call's outcome is evidence for reconciling it.
		for _, l := range o.ledger {
			if err := s.store.FinishAdapterRequest(ctx, l.System, l.Key, l.State, l.Result, l.Error, l.At); err != nil {
				s.log.Error("dispatch: record the call's outcome in the request ledger", "invocation", inv.ID, "error", err)
			}
		}
	}
}
