package controlplane

// ApprovalNeedsStepUp reports whether a staff approval of inv needs the
// approver's passkey assertion made for it (stepup), under p, its
// action's policy (nil when it has none: no step-up). The amount counts
// as the second approver's does: with what already moved or was pending
// on the same customer or object when the request was quoted. It is the
// one answer every place that offers an approval asks — the console's
// card, queue and bulk approval, the Slack message — so a person is sent
// to the step-up page where StaffDecide asks for one (which counts the
// exposure again under the request's lock). An amount in another
// currency than the policy's limits is compared with none of them: it
// needs one whenever the policy asks one above any amount.
func (s *Service) ApprovalNeedsStepUp(p *Policy, inv Invocation) bool {
	if p == nil {
		return false
	}
	if p.StepUpAboveCents != nil && p.Unlike(inv) {
		return true
	}
	total := inv.AmountCents
	if total != nil {
		t := *total + inv.ExposureCents
		total = &t
	}
	return p.NeedsStepUp(total)
}
