package controlplane

import "countersign/internal/adapter"

// SetTestHooks stops the dispatcher where timing matters: slotWait runs
// when it must wait for a free worker, beforeStart in a worker after its
// permit and just before it starts the send. Either may be nil. Set them
// before dispatching.
func (s *Service) SetTestHooks(slotWait func(), beforeStart func(invocationID string)) {
	s.hooks.slotWait, s.hooks.beforeStart = slotWait, beforeStart
}

// SetIdleHook makes RunDispatcher call idle each time it has claimed all
// it could and waits to be woken. Set it before RunDispatcher starts.
func (s *Service) SetIdleHook(idle func()) { s.hooks.idle = idle }

// SetProposalHooks stops a proposal where a race on exposure matters:
// beforeLock runs in its transaction just before the exposure locks,
// counted after the exposure is counted and before the insert. Set them
// before proposing.
func (s *Service) SetProposalHooks(beforeLock, counted func()) {
	s.hooks.beforeExposureLock, s.hooks.exposureCounted = beforeLock, counted
}

// SetChangeLockedHook stops a re-quote or an edit in its transaction once
// it holds the request's and the task's locks, before it writes: locked
// runs there with "requote" or "edit". Set it before either starts.
func (s *Service) SetChangeLockedHook(locked func(path string)) { s.hooks.changeLocked = locked }

// Compensation exposes compensationFor, the rule of which actions Reverse
// can undo, to the tests of that rule.
func (s *Service) Compensation(system, action string) (adapter.ActionSpec, error) {
	return s.compensationFor(system, action)
}
