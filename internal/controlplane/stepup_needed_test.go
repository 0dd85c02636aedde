package controlplane_test

import (
	"testing"

	"countersign/internal/controlplane"
)

// TestApprovalNeedsStepUpCountsTheExposure: the pages' answer counts a
// request's amount with the exposure before it, as the second approver's
// rule does, and an action without a policy needs no step-up.
func TestApprovalNeedsStepUpCountsTheExposure(t *testing.T) {
	t.Parallel()
	s := controlplane.New(nil, nil, controlplane.Config{}, nil, nil)
	above := int64(10_000)
	p := &controlplane.Policy{StepUpAboveCents: &above}
	amount := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		name string
		p    *controlplane.Policy
		inv  controlplane.Invocation
		want bool
	}{
		{"below", p, controlplane.Invocation{AmountCents: amount(6_000)}, false},
		{"above", p, controlplane.Invocation{AmountCents: amount(12_000)}, true},
		{"above with the exposure", p, controlplane.Invocation{AmountCents: amount(6_000), ExposureCents: 5_000}, true},
		{"no amount", p, controlplane.Invocation{}, false},
		{"every approval", &controlplane.Policy{StepUpEvery: true}, controlplane.Invocation{}, true},
		{"no policy", nil, controlplane.Invocation{AmountCents: amount(12_000)}, false},
	} {
		if got := s.ApprovalNeedsStepUp(c.p, c.inv); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
