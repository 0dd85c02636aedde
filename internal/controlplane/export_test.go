package controlplane

import "countersign/internal/adapter"

// Hooks stop the control plane where timing matters, for tests only: each
// runs at its point when set, and a nil one does nothing.
type Hooks struct {
	// SlotWait runs when a worker of RunDispatcher must wait for a free
	// send slot (direct sends hold them too).
	SlotWait func()
	// BeforeStart runs in a worker after its permit, just before it starts
	// the send.
	BeforeStart func(invocationID string)
	// Idle runs each time RunDispatcher has claimed all it could and waits
	// to be woken.
	Idle func()
	// BeforeExposureLock runs in a proposal's transaction just before it
	// takes the exposure locks; ExposureCounted after the exposure is
	// counted, before the insert.
	BeforeExposureLock, ExposureCounted func()
	// ChangeLocked runs in a re-quote's or an edit's transaction once it
	// holds the request's and the task's locks, before it writes, with
	// "requote" or "edit".
	ChangeLocked func(path string)
	// BeforeSubscribe runs in AwaitChange before it subscribes to the
	// invocation's changes; Waiting each time it has read the invocation,
	// found it unchanged and is about to wait.
	BeforeSubscribe, Waiting func(invocationID string)
	// SweepLookup runs in ReconcileDue once a look at an unverified
	// invocation is claimed, before its lookup.
	SweepLookup func(invocationID string)
}

// SetHooks sets the hooks, all at once, replacing any set before. Set them
// before the service is used: before RunDispatcher starts, or a dispatch,
// a proposal or a change.
func (s *Service) SetHooks(h Hooks) {
	s.hooks = testHooks{slotWait: h.SlotWait, beforeStart: h.BeforeStart, idle: h.Idle,
		beforeExposureLock: h.BeforeExposureLock, exposureCounted: h.ExposureCounted, changeLocked: h.ChangeLocked,
		beforeSubscribe: h.BeforeSubscribe, waiting: h.Waiting, sweepLookup: h.SweepLookup}
}

// Compensation exposes compensationFor, the rule of which actions Reverse
// can undo, to the tests of that rule.
func (s *Service) Compensation(system, action string) (adapter.ActionSpec, error) {
	return s.compensationFor(system, action)
}

// Waiting is how many AwaitChange calls this process holds now.
func (s *Service) Waiting() int { return s.waits.Count() }
