package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// Unknown outcomes settle themselves where the system can tell: after a
// write ends unverified, the reconciler (ReconcileDue, run by every
// console instance's dispatcher) looks it up again through its adapter,
// read-only, as a person's Reconcile would — ReconcileFirst after it
// became unverified, then with a back-off that doubles — until the
// evidence settles it (completed when the effect is found and read back;
// failed when the system refused it, or when its authoritative record
// proves it was not applied) or the looks run out (ReconcileAttempts, or
// ReconcileWithin since the first), when it stays unverified for a person
// with the last look's evidence. It is an outbox, as the customer's mail
// is: each look is claimed in PostgreSQL (reconcile_sweeps) before the
// lookup, so two instances never look the same request up at once, and a
// claim whose instance died runs out after reconcileLease. Nothing is
// ever sent.

// reconcileBatch bounds how many invocations one pass looks up.
const reconcileBatch = 50

// reconcileMostWait caps the back-off between two looks.
const reconcileMostWait = 10 * time.Minute

// ReconcileSwept counts what one ReconcileDue pass did.
type ReconcileSwept struct {
	// Settled became completed or failed from the evidence.
	Settled int
	// Waiting stay unverified and will be looked up again.
	Waiting int
	// HandedOver stay unverified for a person: the looks ran out.
	HandedOver int
}

// ReconcileDue looks up, once each, the unverified invocations whose next
// look is due and that no other instance is looking up, and settles those
// the evidence settles. An error is the database's; a look that failed
// (the system unreachable) is a look that settled nothing.
func (s *Service) ReconcileDue(ctx context.Context) (ReconcileSwept, error) {
	var out ReconcileSwept
	now := s.now()
	ids, err := s.store.ReconcilesDue(ctx, now, now.Add(-s.cfg.ReconcileFirst), reconcileBatch)
	if err != nil {
		return out, err
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		if err := s.sweepOne(ctx, id, &out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// reconcileLease is how long one instance holds a look: a lookup and a
// read-back, plus a margin.
func (s *Service) reconcileLease() time.Duration { return 2*s.cfg.CallTimeout + s.cfg.LeaseMargin }

// reconcileWait is the wait after the attempt-th look settled nothing.
func (s *Service) reconcileWait(attempt int) time.Duration {
	return min(s.cfg.ReconcileFirst<<min(attempt, 16), reconcileMostWait)
}

// sweepOne claims the next look at invocation id and, holding it, looks
// the invocation up and records how it ended.
func (s *Service) sweepOne(ctx context.Context, id string, out *ReconcileSwept) error {
	now := s.now()
	attempt, firstAt, ok, err := s.store.ClaimReconcile(ctx, id, now, now.Add(s.reconcileLease()))
	if err != nil || !ok {
		return err
	}
	finish := func(outcome string, ended bool, next time.Time) error {
		return s.store.FinishReconcile(context.WithoutCancel(ctx), id, attempt, outcome, ended, next, s.now())
	}
	inv, err := s.Invocation(ctx, id)
	if err != nil {
		return err
	}
	if inv.State != Unverified {
		return finish("settled_before", true, now) // a person reconciled it since it was listed
	}
	task, err := s.Task(ctx, inv.TaskID)
	if err != nil {
		return err
	}
	next := now.Add(s.reconcileWait(attempt))
	look := &sweepLook{attempt: attempt, last: attempt >= s.cfg.ReconcileAttempts || next.After(firstAt.Add(s.cfg.ReconcileWithin))}
	if s.hooks.sweepLookup != nil {
		s.hooks.sweepLookup(id)
	}
	rec, err := s.reconcile(ctx, SystemActor, inv, task, look)
	switch e, isApp := apperr.As(err); {
	case err == nil && rec.Conclusive:
		out.Settled++
		return finish(string(rec.Invocation.State), true, now)
	case err == nil && look.last:
		out.HandedOver++
		return finish("handed_to_person", true, now)
	case err == nil:
		out.Waiting++
		return finish("inconclusive", false, next)
	case errors.Is(err, store.ErrConflict) || (isApp && (e.Kind == apperr.Conflict || e.Kind == apperr.IllegalTransition)):
		return finish("settled_before", true, now) // a person settled it during the look
	case isApp && ctx.Err() == nil:
		// The system could not be read (unreachable, an error answered):
		// a look that settled nothing.
		s.log.Warn("reconcile sweep: the look-up failed", "invocation", id, "attempt", attempt, "error", err)
		if look.last {
			out.HandedOver++
			if rerr := s.recordHandedOver(ctx, inv, look, err); rerr != nil {
				return rerr
			}
			return finish("handed_to_person", true, now)
		}
		out.Waiting++
		return finish("lookup_failed", false, next)
	}
	return fmt.Errorf("controlplane: reconcile sweep of %s: %w", id, err)
}

// recordHandedOver records that the sweep's last look could not read the
// system, so the invocation stays unverified for a person.
func (s *Service) recordHandedOver(ctx context.Context, inv Invocation, look *sweepLook, lookErr error) error {
	msg := lookErr.Error()
	if e, ok := apperr.As(lookErr); ok && e.Message != "" {
		msg = e.Message
	}
	return s.store.InTx(ctx, func(tx *store.Tx) error {
		return s.record(ctx, tx, SystemActor, EventInvocationReconcileInconclusive, inv.TaskID, inv.ID, look.data(map[string]any{
			"lookup_error": msg, "handed_to_person": true}))
	})
}

// runReconciles runs ReconcileDue every interval until ctx ends.
func (s *Service) runReconciles(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		sw, err := s.ReconcileDue(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Error("reconcile sweep", "error", err)
		}
		if sw.Settled > 0 || sw.HandedOver > 0 {
			s.log.Info("unverified results looked up again", "settled", sw.Settled, "handed_to_person", sw.HandedOver)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
