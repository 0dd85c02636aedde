package controlplane_test

import (
	"testing"

	"countersign/internal/controlplane"
)

// TestInvocationReason: every way an invocation ends without being carried
// out has a code and a sentence; the other states have no reason.
func TestInvocationReason(t *testing.T) {
	const customer = "Its policy has the customer confirm every request of this kind."
	cases := []struct {
		name string
		inv  controlplane.Invocation
		code string
		msg  string
	}{
		{"paused", controlplane.Invocation{State: controlplane.NotDispatched, NotDispatchedReason: controlplane.ReasonTaskPaused},
			"task_paused", "The task was paused before this could be sent."},
		{"budget", controlplane.Invocation{State: controlplane.NotDispatched, NotDispatchedReason: controlplane.ReasonBudgetSpent},
			"budget_spent", "The task's write budget was spent."},
		{"agent", controlplane.Invocation{State: controlplane.Rejected, RouteReason: "Its policy has an agent approve every request of this kind.", DecisionReason: "amount too high"},
			"rejected_by_agent", "Amount too high."},
		{"customer with words", controlplane.Invocation{State: controlplane.Rejected, RouteReason: customer, DecisionReason: "I changed my mind"},
			"declined_by_customer", "The customer declined it: I changed my mind."},
		{"customer without", controlplane.Invocation{State: controlplane.Rejected, RouteReason: customer},
			"declined_by_customer", "The customer declined it without giving a reason."},
		{"superseded", controlplane.Invocation{State: controlplane.Rejected, RouteReason: customer,
			DecisionReason: "superseded: the order changed after the quote was shown"},
			"superseded", "The order changed after the quote was shown."},
		{"approval expired", controlplane.Invocation{State: controlplane.Expired, RouteReason: "Its policy has an agent approve every request of this kind."},
			"approval_expired", "Nobody approved or rejected it before the deadline."},
		{"confirmation expired", controlplane.Invocation{State: controlplane.Expired, RouteReason: customer},
			"confirmation_expired", "The customer did not confirm it before the deadline."},
	}
	for _, tc := range cases {
		r := tc.inv.Reason()
		if r == nil || r.Code != tc.code || r.Message != tc.msg {
			t.Errorf("%s: %+v, want {%s %s}", tc.name, r, tc.code, tc.msg)
		}
	}
	for _, st := range []controlplane.State{controlplane.AwaitingApproval, controlplane.Approved, controlplane.Completed,
		controlplane.Failed, controlplane.Unverified, controlplane.Reversed} {
		if r := (controlplane.Invocation{State: st}).Reason(); r != nil {
			t.Errorf("%s has a reason: %+v", st, r)
		}
	}
	// The route the policy gives a stage-4 proposal is the one Reason reads.
	if got := controlplane.RouteProposal(controlplane.Policy{Stage: controlplane.StageAssisted}, nil, false).Reason; got != customer {
		t.Errorf("stage 4 route reason %q", got)
	}
}
