package controlplane

import (
	"testing"

	"countersign/internal/adapter"
)

// TestSaySaysWhoEndedIt checks the assistant's sentence for a request that
// ended without being carried out names who ended it as the customer's
// page does: the customer's own decline is theirs, never "not approved".
func TestSaySaysWhoEndedIt(t *testing.T) {
	cases := []struct {
		name string
		inv  Invocation
		want string
	}{
		{"declined by the customer", Invocation{State: Rejected, RouteReason: routeCustomerConfirms, DecisionReason: "Not now."},
			"You declined this, so nothing has changed."},
		{"rejected by an agent", Invocation{State: Rejected, RouteReason: "amount above threshold", DecisionReason: "Refunded already"},
			"Our team declined this: Refunded already."},
		{"sent back with a question", Invocation{State: Rejected, DecisionReason: "question: Which order?"},
			"Our team needs to know more before this can go ahead: Which order?"},
		{"superseded", Invocation{State: Rejected, RouteReason: routeCustomerConfirms, DecisionReason: supersededPrefix + "the order changed"},
			"The details changed after this was prepared, so it was not carried out. I can prepare it again if you still want it."},
		{"confirmation expired", Invocation{State: Expired, RouteReason: routeCustomerConfirms},
			"This request expired before it was confirmed, so nothing has changed."},
		{"approval expired", Invocation{State: Expired, RouteReason: "amount above threshold"},
			"Our team did not decide on this in time, so nothing has changed."},
		{"completed with a short reference", Invocation{State: Completed, Action: "cancel_subscription",
			Result: &adapter.Result{Reference: "sub_cancel_d075cdda", ShortReference: "Cancellation #75CDDA"}},
			"Cancelled. Reference: Cancellation #75CDDA."},
		{"completed without one", Invocation{State: Completed, Action: "issue_refund", Result: &adapter.Result{Reference: "re_1"}},
			"Refunded. Reference: re_1."},
	}
	for _, tc := range cases {
		if got := tc.inv.Say(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
