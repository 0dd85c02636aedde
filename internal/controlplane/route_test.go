package controlplane

import (
	"strings"
	"testing"
	"time"

	"countersign/internal/adapter"
)

func cents(n int64) *int64 { return &n }

func TestRouteProposal(t *testing.T) {
	owner := int64(7)
	base := Policy{ApprovalWindow: time.Hour, ConfirmationWindow: time.Minute, OwnerID: &owner,
		AutoMaxCents: cents(2500), ApprovalAboveCents: cents(20000)}
	with := func(stage Stage, f func(*Policy)) Policy {
		p := base
		p.Stage = stage
		if f != nil {
			f(&p)
		}
		return p
	}
	cases := []struct {
		name     string
		policy   Policy
		amount   *int64
		reversal bool
		want     State
		window   time.Duration
	}{
		{"stage 3", with(StagePropose, nil), cents(100), false, AwaitingApproval, time.Hour},
		{"stage 4", with(StageAssisted, nil), cents(100), false, AwaitingConfirmation, time.Minute},
		{"stage 4 above approval threshold", with(StageAssisted, nil), cents(20001), false, AwaitingApproval, time.Hour},
		{"stage 4 at approval threshold", with(StageAssisted, nil), cents(20000), false, AwaitingConfirmation, time.Minute},
		{"stage 5 within ceiling", with(StageAutonomous, nil), cents(2500), false, Approved, 0},
		{"stage 5 above ceiling", with(StageAutonomous, nil), cents(2501), false, AwaitingApproval, time.Hour},
		{"stage 5 without amount", with(StageAutonomous, nil), nil, false, Approved, 0},
		{"stage 5 amount without ceiling", with(StageAutonomous, func(p *Policy) { p.AutoMaxCents = nil }), cents(1), false, AwaitingApproval, time.Hour},
		{"stage 5 without owner", with(StageAutonomous, func(p *Policy) { p.OwnerID = nil }), nil, false, AwaitingApproval, time.Hour},
		{"stage 5 reversal", with(StageAutonomous, nil), nil, true, AwaitingApproval, time.Hour},
		{"stage 4 reversal is confirmed by the customer", with(StageAssisted, nil), nil, true, AwaitingConfirmation, time.Minute},
	}
	for _, tc := range cases {
		got := RouteProposal(tc.policy, tc.amount, tc.reversal)
		if got.State != tc.want || got.Window != tc.window || got.Reason == "" {
			t.Errorf("%s: got %+v, want %s in %v with a reason", tc.name, got, tc.want, tc.window)
		}
		// A reason is read as it is on cards, in Slack and by assistants:
		// a sentence, and no stage number.
		if r := got.Reason; strings.Contains(strings.ToLower(r), "stage") || !strings.HasSuffix(r, ".") ||
			strings.ToUpper(r[:1]) != r[:1] {
			t.Errorf("%s: the reason %q is not a sentence without a stage number", tc.name, r)
		}
	}
	exposed := RouteExposure(with(StageAssisted, nil), cents(15000), 10000, false).Reason
	if want := "The amount with what already moved or is pending on this customer or object ($250.00 in all) is above the approval threshold of $200.00."; exposed != want {
		t.Errorf("split reason %q, want %q", exposed, want)
	}
}

func TestSummaryDisagrees(t *testing.T) {
	q := adapter.Quote{AmountCents: cents(4210), Target: adapter.Target{ID: "ord_1234abcd"}}
	cases := []struct {
		summary string
		want    bool
	}{
		{"", false},
		{"Refund $42.10 for the damaged lamp on ord_1234abcd", false},
		{"Refund $42.1 for the lamp", false},
		{"Refund $42 for the lamp", true},
		{"Refund $1,042.10", true},
		{"Refund the lamp on ord_9999ffff", true},
		{"Refund €42.10", false},
	}
	for _, tc := range cases {
		got, why := summaryDisagrees(tc.summary, q)
		if got != tc.want || (got && why == "") {
			t.Errorf("%q: disagrees = %v (%s), want %v", tc.summary, got, why, tc.want)
		}
	}
}

func TestSayNeverClaimsDoneBeforeVerified(t *testing.T) {
	for _, st := range States {
		inv := Invocation{State: st, Action: "issue_refund", Result: &adapter.Result{Reference: "re_1"}}
		say := inv.Say(adapter.ActionSpec{Name: "issue_refund", DoneWords: "Refunded"})
		if say == "" {
			t.Errorf("%s: empty sentence", st)
		}
		claimsDone := len(say) >= 8 && say[:8] == "Refunded"
		if claimsDone != (st == Completed) {
			t.Errorf("%s: %q", st, say)
		}
	}
}
