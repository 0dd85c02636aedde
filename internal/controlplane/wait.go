package controlplane

import (
	"context"
	"time"

	"countersign/store"
)

// MaxWait is the longest AwaitChange waits: the API's ?wait= and the MCP
// tool wait_for_outcome take no more. It stays well inside the HTTP
// server's write timeout and the request timeouts of the usual clients
// (the MCP SDKs' 60 seconds).
const MaxWait = 30 * time.Second

// WaitOutcome says why AwaitChange returned.
type WaitOutcome string

// The reasons AwaitChange returns.
const (
	// WaitChanged: the invocation is no longer in the state waited on.
	WaitChanged WaitOutcome = "changed"
	// WaitFinal: it is in a terminal state, so nothing more will happen to
	// it (a completed write's reversal aside) and waiting would be in vain.
	WaitFinal WaitOutcome = "final"
	// WaitTimeout: the wait ran out, or ReleaseWaits ended it, with the
	// invocation still in that state.
	WaitTimeout WaitOutcome = "timeout"
)

// AwaitChange returns the invocation id as soon as its state is not from,
// or at once when it is terminal, or after within (at most MaxWait) with
// its state then. It holds no database connection while it waits: the
// process's one LISTEN on store.InvocationsChannel wakes it, and it reads
// the invocation again only when that invocation changed.
//
// The caller checks who may see the invocation first. A change committed
// between that read and this call sent its notification before anyone
// listened; so AwaitChange reads the state only once it is subscribed and
// the LISTEN is in force, and every change after that read wakes it.
func (s *Service) AwaitChange(ctx context.Context, id string, from State, within time.Duration) (Invocation, WaitOutcome, error) {
	timer := time.NewTimer(min(max(within, 0), MaxWait))
	defer timer.Stop()
	if s.hooks.beforeSubscribe != nil {
		s.hooks.beforeSubscribe(id)
	}
	wake, ready, done := s.waits.Subscribe(id)
	defer done()
	select {
	case <-ready:
	case <-ctx.Done():
		return Invocation{}, "", ctx.Err()
	}
	for expired := false; ; {
		inv, err := s.Invocation(ctx, id)
		if err != nil {
			return Invocation{}, "", err
		}
		switch {
		case inv.State != from:
			return inv, WaitChanged, nil
		case inv.State.Terminal():
			return inv, WaitFinal, nil
		case expired:
			return inv, WaitTimeout, nil
		}
		if s.hooks.waiting != nil {
			s.hooks.waiting(id)
		}
		select {
		case <-wake:
		case <-timer.C:
			// A change may have woken it in the same instant: the
			// answer is the state as of now, read once more.
			expired = true
		case <-s.released:
			expired = true
		case <-ctx.Done():
			return Invocation{}, "", ctx.Err()
		}
	}
}

// ReleaseWaits ends every AwaitChange of this process, held now or made
// later, at once with the invocation's state then, as its deadline would:
// at shutdown (http.Server.RegisterOnShutdown), so that long polls answer
// instead of being cut when the shutdown's grace runs out.
func (s *Service) ReleaseWaits() { s.releasedOnce.Do(func() { close(s.released) }) }

// listenInvocations follows store.InvocationsChannel for the wait hub.
func (s *Service) listenInvocations(ctx context.Context, fn func(id string), status func(err error, retry time.Duration)) {
	s.store.Listen(ctx, store.InvocationsChannel, fn, status)
}
