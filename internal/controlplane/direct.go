package controlplane

import (
	"context"
	"sync"

	"countersign/store"
)

// sendSlots are the workers of this process's dispatcher, as tokens: a
// dispatch worker holds one while it claims and sends a write, and a
// direct send (directSend) holds one from before the transaction that
// grants its permit until its outcome is recorded. So the process sends at
// most Config.Workers writes at once, however they were granted.
type sendSlots struct {
	free chan struct{} // a token sent in is a worker taken
	mu   sync.RWMutex
	ctx  context.Context // RunDispatcher's while it runs; nil otherwise
	wg   sync.WaitGroup  // direct sends in flight
}

func newSendSlots(n int) *sendSlots { return &sendSlots{free: make(chan struct{}, n)} }

// open makes direct sends possible for as long as ctx, RunDispatcher's.
func (sl *sendSlots) open(ctx context.Context) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.ctx = ctx
}

// close refuses new direct sends and waits for those in flight.
func (sl *sendSlots) close() {
	sl.mu.Lock()
	sl.ctx = nil
	sl.mu.Unlock()
	sl.wg.Wait()
}

// directSend is a write this process sends itself, on a worker reserved
// before the transaction that approves it, right after that transaction
// commits with its permit and lease: no NOTIFY or poll round trip, and no
// second transaction to start the lease (the permit's is the one the
// request leaves under). The permit is decided exactly as the dispatcher
// decides it (permitCheck) against the same locked rows; anything that
// does not get it at once stays approved for the dispatcher, and a direct
// send lost to a crash is found by the lease sweep like any other.
type directSend struct {
	s   *Service
	ctx context.Context // the dispatcher's: the send outlives the request that approved it
	g   *grant          // the permit granted in the transaction, if any
}

// reserveSend takes a free worker for a direct send; nil when no dispatcher
// runs in this process or all its workers are busy (the write then waits
// for the dispatcher, as it always did).
func (s *Service) reserveSend() *directSend {
	sl := s.slots
	sl.mu.RLock()
	defer sl.mu.RUnlock()
	if sl.ctx == nil || sl.ctx.Err() != nil {
		return nil
	}
	select {
	case sl.free <- struct{}{}:
	default:
		return nil
	}
	sl.wg.Add(1)
	return &directSend{s: s, ctx: sl.ctx}
}

// permit asks for row's permit in tx, which approved row and holds its
// task's lock (task as read under it), and starts its send there when it is
// granted; otherwise it changes nothing and leaves row approved for the
// dispatcher (which defers or refuses it as it always did). It returns the
// invocation as the transaction leaves it. A nil d grants nothing.
func (d *directSend) permit(ctx context.Context, tx *store.Tx, row store.Invocation, task store.Task) (*Invocation, error) {
	if d == nil {
		return nil, nil
	}
	d.g = nil
	now := d.s.now()
	reason, deferred, err := d.s.permitCheck(ctx, tx, row, task, now)
	if err != nil || reason != "" || deferred {
		return nil, err
	}
	g, err := d.s.grantPermit(ctx, tx, row, task, now, true)
	if err != nil {
		return nil, err
	}
	d.g = g
	return &g.inv, nil
}

// permitApproved is permit for an invocation approved by a decision in tx
// (inv, as the decision left it): it locks the task after the invocation's
// row, the order every permit takes them in.
func (d *directSend) permitApproved(ctx context.Context, tx *store.Tx, inv Invocation) (Invocation, error) {
	if d == nil || inv.State != Approved {
		return inv, nil
	}
	row, err := tx.Invocation(ctx, inv.ID)
	if err != nil {
		return inv, err
	}
	task, err := tx.LockTask(ctx, row.TaskID)
	if err != nil {
		return inv, err
	}
	granted, err := d.permit(ctx, tx, row, task)
	if err != nil || granted == nil {
		return inv, err
	}
	return *granted, nil
}

// done runs once the transaction ended with err: it sends the write
// granted there on the reserved worker, or gives the worker back. It
// reports whether it sends; false asks the caller to wake the dispatcher
// for what it approved.
func (d *directSend) done(err error) bool {
	if d == nil {
		return false
	}
	if err != nil || d.g == nil {
		d.release()
		return false
	}
	g := *d.g
	go func() {
		defer d.release()
		d.s.send(d.ctx, g)
	}()
	return true
}

func (d *directSend) release() {
	<-d.s.slots.free
	d.s.slots.wg.Done()
}
