package controlplane

import (
	"context"
	"sync"
	"time"

	"countersign/store"
)

// RunDispatcher dispatches approved work until ctx ends, with a pool of
// Config.Workers workers that each claim one write, send it, and claim
// again: a slow send holds its own worker only, and the others keep
// claiming (no pass waits for its slowest send). An idle worker claims when
// woken: by this process's own commits (Propose, StaffDecide and
// CustomerDecide kick it after committing approved work), by a NOTIFY
// (another console instance approved something, or a send finished and
// freed an in-flight slot), and every interval regardless (a lost
// notification, or a kick whose claim skipped a row a losing decision still
// held locked). A worker that claimed something wakes one more before it
// sends and looks again itself once its send is done, so a burst of
// approved work is claimed by as many workers as it needs, while one kick
// costs one empty scan, not one per worker. Approved work this process can
// send at once does not wait for a worker's claim at all: the transaction
// that approves it also grants its permit and lease, and the send leaves
// right after its commit on a worker reserved for it (directSend); the
// claims, the interval and the sweeps pick up whatever that left behind.
// Several instances may run it at once: each invocation is claimed by one
// (FOR UPDATE SKIP LOCKED) and leaves at most once.
//
// Every interval it also sweeps (Sweep: expired leases become unverified,
// passed deadlines expired, stragglers of cancelled tasks withdrawn), on
// its own: a claim may wait a long time — on the lock of a task whose
// permit another instance holds while hung — and a lease that runs out
// meanwhile is still swept. The first sweep and the first scan run at
// start-up, so work a crashed instance left dispatching is found as soon as
// its lease ends. Every interval, again on its own (a lookup waits on
// the business system), it looks up the unverified writes whose next look
// is due (ReconcileDue). On return it waits for the sends in flight.
func (s *Service) RunDispatcher(ctx context.Context, interval time.Duration) {
	go s.runSweeps(ctx, interval)
	go s.runReconciles(ctx, interval)
	go s.listen(ctx, s.wake)
	var wg sync.WaitGroup
	defer wg.Wait()
	s.slots.open(ctx)
	defer s.slots.close()
	for range s.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.dispatchWorker(ctx)
		}()
	}
	s.kick() // the first scan, at start-up
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.kick()
		}
	}
}

// dispatchWorker waits for a kick, then claims and sends one write at a
// time until nothing is left that can go now, and waits again; until ctx
// ends.
func (s *Service) dispatchWorker(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		for {
			// A permit is asked for only with a worker free to send it at
			// once; direct sends take workers too.
			if !s.takeSlot(ctx, s.slots.free) {
				return
			}
			g, err := s.claimOne(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.Error("dispatch", "error", err)
			}
			if g == nil {
				<-s.slots.free
				break
			}
			// There may be more: another idle worker looks while this one
			// sends, and this one looks again once its send is done.
			s.kick()
			s.send(ctx, *g)
			<-s.slots.free
		}
		if s.hooks.idle != nil {
			s.hooks.idle()
		}
	}
}

// claimOne asks for permits until one is granted or nothing approved is
// left that can go now. Work deferred by an in-flight or rate limit is
// skipped for the rest of this scan; work refused a permit became
// not_dispatched.
func (s *Service) claimOne(ctx context.Context) (*grant, error) {
	var deferred []string
	for ctx.Err() == nil {
		g, p, err := s.nextPermit(ctx, deferred)
		if err != nil || g == nil {
			return nil, err
		}
		switch p {
		case permitGranted:
			return g, nil
		case permitDeferred:
			deferred = append(deferred, g.inv.ID)
		}
	}
	return nil, ctx.Err()
}

// runSweeps sweeps expired leases, passed deadlines and requests left
// waiting in a cancelled task every interval until ctx ends.
func (s *Service) runSweeps(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		sw, err := s.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Error("sweep", "error", err)
		}
		if sw.Unverified > 0 {
			s.log.Warn("dispatches lost track of; now unverified", "count", sw.Unverified)
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
