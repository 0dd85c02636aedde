package controlplane

import "sync/atomic"

// ApprovalNeedsStepUp reports whether a staff approval of inv needs the
// approver's passkey assertion made for it (stepup), under p, its
// action's policy (nil when it has none: no step-up). The amount counts
// as the second approver's does: with what already moved or was pending
// on the same customer or object when the request was quoted. It is the
// one answer every place that offers an approval asks — the console's
// card, queue and bulk approval, the Slack message — so a person is sent
// to the step-up page where StaffDecide asks for one (which counts the
// exposure again under the request's lock).
func (s *Service) ApprovalNeedsStepUp(p *Policy, inv Invocation) bool {
	if p == nil {
		return false
	}
	q := *p
	if standIn := s.stepUpStandIn.Load(); standIn != nil {
		(*standIn)(&q)
	}
	total := inv.AmountCents
	if total != nil {
		t := *total + inv.ExposureCents
		total = &t
	}
	return q.NeedsStepUp(total)
}

// StandInStepUp lets tests say what policies ask of step-up while the
// policies table keeps no step-up setting: fn may set a policy's
// StepUpEvery or StepUpAboveCents before ApprovalNeedsStepUp asks it
// (nil removes it). It changes nothing StaffDecide checks. Once policies
// keep their step-up setting, tests set it on the policy and this goes.
func (s *Service) StandInStepUp(fn func(*Policy)) {
	if fn == nil {
		s.stepUpStandIn.Store(nil)
		return
	}
	s.stepUpStandIn.Store(&fn)
}

// stepUpStandIn is StandInStepUp's function.
type stepUpStandIn = atomic.Pointer[func(*Policy)]

// WatchStaffDecisions lets tests see every decision StaffDecide is asked
// to make, before anything is checked — the step-up assertion a page
// passed with an approval — while the control plane keeps no assertion
// of its own to read back (nil removes it). Once decisions keep their
// step-up, tests read it there and this goes.
func (s *Service) WatchStaffDecisions(fn func(StaffDecision)) {
	if fn == nil {
		s.staffDecisionWatch.Store(nil)
		return
	}
	s.staffDecisionWatch.Store(&fn)
}

// watchStaffDecision shows d to the function WatchStaffDecisions set.
func (s *Service) watchStaffDecision(d StaffDecision) {
	if watch := s.staffDecisionWatch.Load(); watch != nil {
		(*watch)(d)
	}
}
