package controlplane

import (
	"context"
	"errors"

	"countersign/store"
)

// startSend restarts inv's lease for the worker holding lease, in one
// guarded statement just before its request leaves, and reports whether
// the request may go: only while the invocation is still dispatching under
// this worker's own lease, that lease has not run out, its task is active
// and the global stop is off. A pause, cancel or stop that committed
// between the permit and this moment makes the invocation not dispatched
// with that reason (haltSend); a lost lease leaves it to the sweeper, and
// the worker records that it withheld the request.
func (s *Service) startSend(ctx context.Context, inv Invocation, lease string) bool {
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		now := s.now()
		until := now.Add(s.lease())
		if _, err := tx.StartSend(ctx, inv.ID, lease, now, until); err != nil {
			return err
		}
		return s.record(ctx, tx, SystemActor, EventDispatchStarted, inv.TaskID, inv.ID, map[string]any{"lease_until": until})
	})
	if err == nil {
		return true
	}
	if !errors.Is(err, store.ErrConflict) {
		s.log.Error("dispatch: start send; not sent", "invocation", inv.ID, "error", err)
		return false // the lease sweeper makes it unverified
	}
	halted, err := s.haltSend(context.WithoutCancel(ctx), inv, lease)
	if err != nil {
		s.log.Error("dispatch: record a send stopped before it left; not sent", "invocation", inv.ID, "error", err)
		return false // the lease sweeper makes it unverified
	}
	if halted {
		return false
	}
	s.log.Warn("dispatch: lease lost before the request left; not sent", "invocation", inv.ID)
	err = s.store.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		return s.record(ctx, tx, SystemActor, EventDispatchWithheld, inv.TaskID, inv.ID, map[string]any{
			"reason": "The dispatch lease ran out before the request left; it was not sent."})
	})
	if err != nil {
		s.log.Error("dispatch: record withheld send", "invocation", inv.ID, "error", err)
	}
	return false
}

// haltSend makes inv not dispatched, for the holder of lease, when its task
// is no longer active or the global stop is on: the request was stopped
// after its permit, before it left. It reports whether it did; false means
// the cause was the lease (or the row changed hands), which startSend
// records itself.
func (s *Service) haltSend(ctx context.Context, inv Invocation, lease string) (bool, error) {
	halted := false
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		gate, err := tx.SendGate(ctx, inv.ID)
		if err != nil {
			return err
		}
		reason := taskStateReason(TaskState(gate.TaskState))
		if reason == "" && gate.GlobalStop {
			reason = ReasonGlobalStop
		}
		if reason == "" {
			return nil
		}
		now := s.now()
		r := string(reason)
		_, err = tx.TransitionHeldInvocation(ctx, inv.ID, lease, []string{string(Dispatching)}, string(NotDispatched), now,
			store.InvocationChange{NotDispatchedReason: &r, FinishedAt: &now})
		if errors.Is(err, store.ErrConflict) {
			return nil
		}
		if err != nil {
			return err
		}
		halted = true
		if err := s.record(ctx, tx, SystemActor, EventInvocationNotDispatched, inv.TaskID, inv.ID, map[string]any{
			"reason": r, "stopped": "after its permit, before the request left"}); err != nil {
			return err
		}
		// Its in-flight slot is free again.
		return tx.Notify(ctx, store.DispatchChannel, inv.TaskID)
	})
	return halted, err
}
