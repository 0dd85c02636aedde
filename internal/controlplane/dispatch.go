package controlplane

import (
	"context"
	"sync"
	"sync/atomic"

	"countersign/store"
)

// DispatchOnce claims approved invocations from PostgreSQL and dispatches
// each one that gets a permit, up to Config.Workers at a time, until none
// is left that can go now; it returns when those sends have finished.
// Several console instances may run it at once: each invocation is claimed
// by one (FOR UPDATE SKIP LOCKED) and leaves at most once. It returns how
// many were sent (the adapter was called). RunDispatcher does not use it:
// its workers keep claiming while sends are in flight (dispatchWorker).
func (s *Service) DispatchOnce(ctx context.Context) (int, error) {
	total := 0
	for {
		sent, deferred, err := s.dispatchPass(ctx)
		total += sent
		// Work deferred by an in-flight limit may go now that this pass's
		// sends have finished; work deferred by another instance's sends is
		// woken by that instance's NOTIFY instead.
		if err != nil || deferred == 0 || sent == 0 {
			return total, err
		}
	}
}

// dispatchPass grants every permit it can, sends those writes concurrently
// and waits for them; it reports how many it sent and deferred.
func (s *Service) dispatchPass(ctx context.Context) (sent, deferredCount int, err error) {
	w := newWorkers(s.cfg.Workers)
	defer func() {
		w.wg.Wait()
		sent = int(w.calls.Load())
	}()
	deferredCount, err = s.claimAll(ctx, w)
	return 0, deferredCount, err
}

// workers bounds how many writes one dispatcher sends at once.
type workers struct {
	sem   chan struct{}
	wg    sync.WaitGroup
	calls atomic.Int64
}

func newWorkers(n int) *workers { return &workers{sem: make(chan struct{}, n)} }

// claimAll asks for permits one at a time, each only once a worker is
// free, and hands each granted write to a worker that sends it; it returns
// when nothing approved is left that can go now, without waiting for the
// sends it started. Work deferred by an in-flight or rate limit is skipped
// for the rest of the scan and counted.
func (s *Service) claimAll(ctx context.Context, w *workers) (int, error) {
	var deferred []string
	for {
		// A permit starts a lease, so it is asked for only once a worker is
		// free to send at once: a queued write never waits for a slot while
		// its lease runs out.
		if !s.takeSlot(ctx, w.sem) {
			return len(deferred), ctx.Err()
		}
		g, p, err := s.nextPermit(ctx, deferred)
		if err != nil || g == nil {
			<-w.sem
			return len(deferred), err
		}
		if p != permitGranted {
			<-w.sem
			if p == permitDeferred {
				deferred = append(deferred, g.inv.ID)
			}
			continue
		}
		w.wg.Add(1)
		go func() {
			defer func() { <-w.sem; w.wg.Done() }()
			if s.send(ctx, *g) {
				w.calls.Add(1)
			}
		}()
	}
}

// takeSlot waits for a free worker slot; it reports false when ctx ended
// first.
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
// called); the outcome is on the invocation.
func (s *Service) Dispatch(ctx context.Context, id string) (bool, error) {
	g, p, err := s.permitFor(ctx, func(tx *store.Tx) ([]store.Invocation, error) { return tx.ClaimApprovedByID(ctx, id) })
	if err != nil || g == nil || p != permitGranted {
		return false, err
	}
	return s.send(ctx, *g), nil
}
