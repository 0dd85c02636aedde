package controlplane

import (
	"context"
	"time"

	"countersign/store"
)

// RunDispatcher dispatches approved work until ctx ends: at once when a
// NOTIFY says something was approved (in this or another console
// instance), and every interval regardless. Every interval it also sweeps
// expired leases (unverified) and passed deadlines (expired), on its own:
// a dispatch pass may wait a long time — on its sends, or on the lock of a
// task whose permit another instance holds while hung — and a lease that
// runs out meanwhile is still swept. The first sweep runs at start-up, so
// work a crashed instance left dispatching is found as soon as its lease
// ends.
func (s *Service) RunDispatcher(ctx context.Context, interval time.Duration) {
	go s.runSweeps(ctx, interval)
	wake := make(chan struct{}, 1)
	go s.listen(ctx, wake)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.DispatchOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("dispatch", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
	}
}

// runSweeps sweeps expired leases and passed deadlines every interval
// until ctx ends.
func (s *Service) runSweeps(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := s.SweepLeases(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("sweep leases", "error", err)
		} else if n > 0 {
			s.log.Warn("dispatches lost track of; now unverified", "count", n)
		}
		if _, err := s.ExpireDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("expire due", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// listen pokes wake for each notification on the dispatch channel until
// ctx ends; the store listens again after a failure.
func (s *Service) listen(ctx context.Context, wake chan<- struct{}) {
	s.store.Listen(ctx, store.DispatchChannel, func(string) {
		select {
		case wake <- struct{}{}:
		default:
		}
	}, func(err error, retry time.Duration) {
		if err != nil {
			s.log.Warn("dispatch listener: listening again", "error", err, "after", retry)
		}
	})
}

// ListenTaskEvents calls fn with the task id of every new event of a task,
// in this or any other console instance, until ctx ends (live task pages
// follow it). status is called with nil each time the LISTEN is in force
// and with the error and the wait before the next attempt each time it
// failed.
func (s *Service) ListenTaskEvents(ctx context.Context, fn func(taskID string), status func(err error, retry time.Duration)) {
	s.store.Listen(ctx, store.TaskEventsChannel, fn, status)
}
