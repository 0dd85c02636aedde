package controlplane

import (
	"context"

	"countersign/store"
)

// takeSlot waits for a free send slot (a worker of this process's
// dispatcher); it reports false when ctx ended first.
func (s *Service) takeSlot(ctx context.Context, sem chan<- struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	default:
		if s.hooks.slotWait != nil {
			s.hooks.slotWait()
		}
		select {
		case sem <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		}
	}
}

// Dispatch tries to dispatch one invocation now, if it is approved and no
// one else holds it. It reports whether it was sent (the adapter was
// called); the outcome is on the invocation. Several console instances
// may call it at once for the same invocation, and beside their
// dispatchers (RunDispatcher): it is claimed by one (FOR UPDATE SKIP
// LOCKED) and leaves at most once.
func (s *Service) Dispatch(ctx context.Context, id string) (bool, error) {
	g, p, err := s.permitFor(ctx, func(tx *store.Tx) ([]store.Invocation, error) { return tx.ClaimApprovedByID(ctx, id) })
	if err != nil || g == nil || p != permitGranted {
		return false, err
	}
	return s.send(ctx, *g), nil
}
