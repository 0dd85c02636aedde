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
		spec adapter.ActionSpec
		want string
	}{
		{"declined by the customer", Invocation{State: Rejected, RouteReason: routeCustomerConfirms, DecisionReason: "Not now."},
			adapter.ActionSpec{}, "You declined this, so nothing has changed."},
		{"rejected by an agent", Invocation{State: Rejected, RouteReason: "amount above threshold", DecisionReason: "Refunded already"},
			adapter.ActionSpec{}, "Our team declined this: Refunded already."},
		{"sent back with a question", Invocation{State: Rejected, DecisionReason: "question: Which order?"},
			adapter.ActionSpec{}, "Our team needs to know more before this can go ahead: Which order?"},
		{"superseded", Invocation{State: Rejected, RouteReason: routeCustomerConfirms, DecisionReason: supersededPrefix + "the order changed"},
			adapter.ActionSpec{}, "The details changed after this was prepared, so it was not carried out. I can prepare it again if you still want it."},
		{"confirmation expired", Invocation{State: Expired, RouteReason: routeCustomerConfirms},
			adapter.ActionSpec{}, "This request expired before it was confirmed, so nothing has changed."},
		{"approval expired", Invocation{State: Expired, RouteReason: "amount above threshold"},
			adapter.ActionSpec{}, "Our team did not decide on this in time, so nothing has changed."},
		{"completed with a short reference", Invocation{State: Completed, Action: "cancel_subscription",
			Result: &adapter.Result{Reference: "sub_cancel_d075cdda", ShortReference: "#75CDDA"}},
			adapter.ActionSpec{Name: "cancel_subscription", DoneWords: "Cancelled"}, "Cancelled. Reference: #75CDDA."},
		{"completed without one", Invocation{State: Completed, Action: "issue_refund", Result: &adapter.Result{Reference: "re_1"}},
			adapter.ActionSpec{Name: "issue_refund", DoneWords: "Refunded"}, "Refunded. Reference: re_1."},
		{"not applied, found by reconciling", Invocation{State: Failed, Error: &adapter.Error{Code: adapter.CodeNotApplied, Outcome: adapter.Refused,
			Message: "Harbour & Pine has no effect under this call's key in its authoritative record, 1m0s after the call was begun: it was not applied.",
			Hint:    "Propose the action again if it is still wanted."}},
			adapter.ActionSpec{}, "This did not go through: we checked, and it was never carried out, so nothing has changed. I can prepare it again if you still want it."},
		// The same code settles a call Countersign's own request ledger
		// never had: no system's record was read, so none is claimed.
		{"never sent, found by reconciling", Invocation{State: Failed, Error: &adapter.Error{Code: adapter.CodeNotApplied, Outcome: adapter.Refused,
			Message: "Countersign's request ledger has no call under this request's key: it never left, and now it never will.",
			Hint:    "Propose the action again if it is still wanted."}},
			adapter.ActionSpec{}, "This did not go through: we checked, and it was never carried out, so nothing has changed. I can prepare it again if you still want it."},
		{"completed by an action that names no words", Invocation{State: Completed, Action: "issue_refund", Result: &adapter.Result{Reference: "re_1"}},
			adapter.ActionSpec{Name: "issue_refund"}, "Done. Reference: re_1."},
	}
	for _, tc := range cases {
		if got := tc.inv.Say(tc.spec); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
