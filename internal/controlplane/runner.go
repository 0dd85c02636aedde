package controlplane

import (
	"context"
	"errors"
	"time"
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

// listen holds one connection LISTENing on the dispatch channel and pokes
// wake for each notification, reconnecting after errors.
func (s *Service) listen(ctx context.Context, wake chan<- struct{}) {
	for ctx.Err() == nil {
		err := func() error {
			conn, err := s.store.Pool().Acquire(ctx)
			if err != nil {
				return err
			}
			defer conn.Release()
			if _, err := conn.Exec(ctx, "LISTEN "+DispatchChannel); err != nil {
				return err
			}
			for {
				if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
					// The connection is in an unknown state: drop it from the pool.
					conn.Conn().Close(context.Background())
					return err
				}
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}()
		if err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("dispatch listener", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}
