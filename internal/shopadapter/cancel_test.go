package shopadapter_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

var cancelPro = map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "missing_feature", "effective": "end_of_period"}

// TestCancelOncePerDay: a cancellation within the last 24 hours blocks
// another one of the same subscription, even after it was reinstated; one
// a second older than that does not.
func TestCancelOncePerDay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		earlier time.Duration // how long before testNow the first cancellation was
		code    string
	}{
		{"exactly 24 hours ago", 24 * time.Hour, "limit_one_per_day"},
		{"24 hours and a second ago", 24*time.Hour + time.Second, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			then := func() time.Time { return testNow.Add(-tc.earlier) }
			past := shopadapter.New(shopadapter.Config{Token: shopToken, Name: "shop", BaseURL: b.url,
				Ledger: adapter.NewLedger(b.store, then), Now: then})
			q, err := past.DryRun(context.Background(), jordan, shopadapter.ActionCancelSubscription, raw(t, cancelPro))
			if err != nil {
				t.Fatal(err)
			}
			first := adapter.Call{Action: shopadapter.ActionCancelSubscription, Args: raw(t, cancelPro), IdempotencyKey: "key-first", Quote: q}
			if _, err := past.Execute(context.Background(), jordan, first); err != nil {
				t.Fatal(err)
			}
			b.mustExecute(t, jordan, shopadapter.ActionReinstateSubscription, map[string]any{"subscription_id": "Pro plan for acme.example"}, "key-back")

			_, err = b.dryRun(t, jordan, shopadapter.ActionCancelSubscription, cancelPro)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("second cancellation refused: %v", err)
				}
				return
			}
			ae := wantError(t, err, tc.code, adapter.Refused)
			if !ae.PolicyRefusal {
				t.Errorf("limit is not marked as a policy refusal: %+v", ae)
			}
			// Execute enforces it too, and sends nothing.
			target, err := b.adapter.Resolve(context.Background(), jordan, shopadapter.KindSubscription, "Pro")
			if err != nil {
				t.Fatal(err)
			}
			_, err = b.adapter.Execute(context.Background(), jordan, adapter.Call{Action: shopadapter.ActionCancelSubscription,
				Args: raw(t, cancelPro), IdempotencyKey: "key-second", Quote: adapter.Quote{Target: target}})
			wantError(t, err, tc.code, adapter.Refused)
			if got := b.effectKinds(t, "key-second"); len(got) != 0 {
				t.Errorf("effects %v, want none", got)
			}
		})
	}
}

// TestCancelWorkflowNeverHalfDone breaks the second step of the
// cancellation. An answered failure is compensated (the plan is active
// again, the error says so); a lost answer is Unknown, never done.
func TestCancelWorkflowNeverHalfDone(t *testing.T) {
	t.Parallel()
	const void = "POST /invoices/{id}/void"
	cases := []struct {
		name      string
		fault     demoshop.FaultRule
		code      string
		outcome   adapter.Outcome
		steps     []adapter.Step
		effects   []string
		status    string // the subscription's status afterwards
		verified  bool   // what a read-back says
		reference bool   // whether Lookup rebuilds a result
	}{
		{"void fails with a 500", demoshop.FaultRule{Route: void, ErrorRate: 1}, "cancellation_rolled_back", adapter.Refused,
			[]adapter.Step{{Name: "cancel_subscription", Outcome: "applied"},
				{Name: "void_upcoming_invoice", Outcome: "unknown", Detail: adapter.CodeOutcomeUnknown},
				{Name: "reinstate_subscription", Outcome: "compensated", Detail: "cancellation undone"}},
			[]string{"subscription.cancelled", "subscription.reinstated"}, "active", false, false},
		{"void applied, answer dropped", demoshop.FaultRule{Route: void, DropAfterCommit: 1}, adapter.CodeOutcomeUnknown, adapter.Unknown,
			[]adapter.Step{{Name: "cancel_subscription", Outcome: "applied"},
				{Name: "void_upcoming_invoice", Outcome: "unknown", Detail: adapter.CodeOutcomeUnknown}},
			[]string{"subscription.cancelled", "invoice.voided"}, "cancelled", true, true},
		{"void connection reset", demoshop.FaultRule{Route: void, ResetRate: 1}, adapter.CodeOutcomeUnknown, adapter.Unknown,
			[]adapter.Step{{Name: "cancel_subscription", Outcome: "applied"},
				{Name: "void_upcoming_invoice", Outcome: "unknown", Detail: adapter.CodeOutcomeUnknown}},
			[]string{"subscription.cancelled"}, "cancelled", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.fault(t, tc.fault)
			call, res, err := b.execute(t, jordan, shopadapter.ActionCancelSubscription, cancelPro, "key-1")
			ae := wantError(t, err, tc.code, tc.outcome)
			if diff := cmp.Diff(tc.steps, res.Steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.effects, b.effectKinds(t, "key-1")); diff != "" {
				t.Errorf("shop effects (-want +got):\n%s", diff)
			}
			sub := b.subscription(t, call.Quote.Target.ID)
			if string(sub.Status) != tc.status {
				t.Errorf("subscription is %s, want %s", sub.Status, tc.status)
			}
			if tc.status == "active" && sub.UpcomingInvoiceID == nil {
				t.Error("rolled back, but no upcoming invoice bills the next period")
			}
			if ae.Retryable {
				t.Error("a cancellation error must not invite a retry")
			}
			b.shop.ClearFaults()
			v, err := b.adapter.Verify(context.Background(), jordan, call, nil)
			if err != nil || v.Verified != tc.verified || v.Evidence == "" {
				t.Errorf("verify %+v, %v; want verified %t", v, err, tc.verified)
			}
			look, err := b.adapter.Lookup(context.Background(), jordan, call)
			if err != nil || !look.Found || (look.Result != nil) != tc.reference {
				t.Errorf("lookup %+v, %v; want a result: %t", look, err, tc.reference)
			}
			// A repeat of the key sends nothing, whatever the first outcome.
			if _, err := b.adapter.Execute(context.Background(), jordan, call); err == nil {
				t.Error("repeat after a failed cancellation succeeded")
			}
			if diff := cmp.Diff(tc.effects, b.effectKinds(t, "key-1")); diff != "" {
				t.Errorf("shop effects after a repeat (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUndoneCancellationThatChargedIsNotNothing cancels a subscription at
// once (settling its $24.00 balance) while its invoice cannot be voided: the
// cancellation is undone, but the charge stays, so the call must not be
// refused as "nothing changed" (which would mark it failed). It is Unknown,
// naming the charge, for a person to settle.
func TestUndoneCancellationThatChargedIsNotNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fault(t, demoshop.FaultRule{Route: "POST /invoices/{id}/void", ErrorRate: 1})
	_, res, err := b.execute(t, noah, shopadapter.ActionCancelSubscription,
		map[string]any{"subscription_id": "Business", "reason_code": "switching", "effective": "immediately"}, "key-1")
	ae := wantError(t, err, adapter.CodeOutcomeUnknown, adapter.Unknown)
	if !strings.Contains(ae.Message, "$24.00") || !strings.Contains(ae.Message, "not returned") {
		t.Errorf("message %q does not name the charge that stayed", ae.Message)
	}
	if ae.Retryable {
		t.Error("must not invite a retry")
	}
	if diff := cmp.Diff([]string{"subscription.cancelled", "subscription.reinstated"}, b.effectKinds(t, "key-1")); diff != "" {
		t.Errorf("shop effects (-want +got):\n%s", diff)
	}
	if got := res.Steps[len(res.Steps)-1]; got.Name != "reinstate_subscription" || got.Outcome != "compensated" {
		t.Errorf("last step %+v, want the reinstatement", got)
	}
}
