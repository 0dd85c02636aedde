package shopadapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

// TestEveryActionDryRunsExecutesAndVerifies runs each action on good input
// against the seeded shop: the dry run quotes the target's version, the
// execution sends the shop's effects under the key, and a read-back
// verifies them.
func TestEveryActionDryRunsExecutesAndVerifies(t *testing.T) {
	t.Parallel()
	address := map[string]any{"name": "Jordan Lee", "line1": "1 Harbour Way", "city": "Oakland", "postal_code": "94607", "country": "us"}
	cases := []struct {
		name      string
		principal adapter.Principal
		action    string
		args      map[string]any
		refPrefix string
		effects   []string
	}{
		{"cancel at period end", jordan, shopadapter.ActionCancelSubscription,
			map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"},
			"sub_cancel_", []string{"subscription.cancelled", "invoice.voided"}},
		{"cancel immediately with a balance", noah, shopadapter.ActionCancelSubscription,
			map[string]any{"subscription_id": "Business", "reason_code": "switching", "effective": "immediately"},
			"sub_cancel_", []string{"subscription.cancelled", "invoice.voided"}},
		{"reinstate", hannah, shopadapter.ActionReinstateSubscription,
			map[string]any{"subscription_id": "my Pro plan"},
			"sub_reinstate_", []string{"subscription.reinstated"}},
		{"refund", jordan, shopadapter.ActionIssueRefund,
			map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"},
			"re_", []string{"refund.created"}},
		{"resend receipt", jordan, shopadapter.ActionResendReceipt,
			map[string]any{"invoice_id": "paid Pro invoice"},
			"rcpt_", []string{"receipt.sent"}},
		{"product description", operator, shopadapter.ActionUpdateProductDesc,
			map[string]any{"product_id": "LAMP-WAL-01", "description": "Solid walnut base, linen shade, warm LED bulb included."},
			"prod_update_", []string{"product.updated"}},
		{"shipping address", jordan, shopadapter.ActionChangeShippingAddress,
			map[string]any{"order_id": "standing desk mat", "address": address},
			"addr_change_", []string{"order.shipping_address_changed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			q, err := b.dryRun(t, tc.principal, tc.action, tc.args)
			if err != nil {
				t.Fatalf("dry run: %v", err)
			}
			if q.Title == "" || q.ConfirmLabel == "" || q.DeclineLabel == "" || len(q.Lines) == 0 || len(q.Consequences) == 0 {
				t.Errorf("quote is missing parts: %+v", q)
			}
			if q.Target.System != "shop" || q.Target.ID == "" || q.Target.Version == "" || q.Target.Display == "" {
				t.Errorf("quote target %+v, want system, id, display and version", q.Target)
			}
			if got := b.effectKinds(t, "key-1"); len(got) != 0 {
				t.Fatalf("dry run changed the shop: %v", got)
			}
			call, res := b.mustExecute(t, tc.principal, tc.action, tc.args, "key-1")
			if !strings.HasPrefix(res.Reference, tc.refPrefix) || res.Deduplicated || len(res.Steps) == 0 {
				t.Errorf("result %+v, want reference %s… with steps", res, tc.refPrefix)
			}
			if diff := cmp.Diff(tc.effects, b.effectKinds(t, "key-1")); diff != "" {
				t.Errorf("shop effects under the key (-want +got):\n%s", diff)
			}
			entry, found, err := b.ledger.Get(context.Background(), "shop", "key-1")
			if err != nil || !found || entry.State != "applied" || entry.Result.Reference != res.Reference {
				t.Errorf("ledger entry %+v found=%t err=%v, want applied with %s", entry, found, err, res.Reference)
			}
			look, err := b.adapter.Lookup(context.Background(), tc.principal, call)
			if err != nil || !look.Found || look.Result == nil || look.Result.Reference != res.Reference || len(look.Effects) != len(tc.effects) {
				t.Errorf("lookup %+v, %v", look, err)
			}
		})
	}
}

// TestCancelQuote checks, line by line, the quote of the example
// cancellation (Pro plan for acme.example, effective at the period's end).
func TestCancelQuote(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q, err := b.dryRun(t, jordan, shopadapter.ActionCancelSubscription,
		map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"})
	if err != nil {
		t.Fatal(err)
	}
	periodEnd := time.Date(2026, 4, 30, 15, 4, 5, 0, time.UTC)
	want := adapter.Quote{
		Title:  "Cancel Pro plan for acme.example",
		Target: adapter.Target{System: "shop", Kind: "subscription", Display: "Pro plan for acme.example", Version: "1"},
		Lines: []adapter.QuoteLine{
			{Label: "Status", From: "active", To: "cancelled", Customer: "Your subscription will be cancelled."},
			{Label: "Access until", To: "April 30, 2026"},
			{Label: "Next charge", From: "$49.00 on April 30, 2026", To: "none", Emphasis: true},
			{Label: "Reason", To: "too expensive"},
		},
		Consequences: []string{"You will keep access until April 30, 2026.", "You will not be charged on April 30, 2026."},
		EffectiveAt:  &periodEnd,
		Constraints: []string{"At most one cancellation per subscription per day.",
			"Until April 30, 2026 the cancellation can be undone (reinstate_subscription)."},
		ConfirmLabel: "Cancel subscription",
		DeclineLabel: "Keep plan",
		DoneWords:    "Cancelled",
		Reversible:   true,
		Locale:       "en",
	}
	// The translations have their own test (TestQuotesInTheCustomersLanguage).
	if diff := cmp.Diff(want, q, cmpopts.IgnoreFields(adapter.Target{}, "ID"), cmpopts.IgnoreFields(adapter.Quote{}, "Translations")); diff != "" {
		t.Errorf("quote (-want +got):\n%s", diff)
	}
}

// TestCancelQuoteSentences reproduces the customer's cancellation
// confirmation ("Effective April 30. You will not be charged on May 1.") for a
// period that ends at midnight: access to the last day, no charge on the
// next.
func TestCancelQuoteSentences(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, p := b.newCustomer(t, demoshop.CustomerFixture{Sites: []string{"acme-test.example"}})
	_, err := b.shop.CreateSubscription(context.Background(), demoshop.SubscriptionFixture{CustomerID: c.ID,
		Plan: "Pro", PriceCents: 4900, PeriodEnd: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		effective string
		want      []string
	}{
		{"end_of_period", []string{"You will keep access until April 30, 2026.", "You will not be charged on May 1, 2026."}},
		{"immediately", []string{"Your access ends now.", "You will not be charged on May 1, 2026."}},
	}
	for _, tc := range cases {
		q, err := b.dryRun(t, p, shopadapter.ActionCancelSubscription,
			map[string]any{"subscription_id": "Pro", "reason_code": "other", "effective": tc.effective})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, q.Consequences); diff != "" {
			t.Errorf("%s: consequences (-want +got):\n%s", tc.effective, diff)
		}
	}
}

// TestCancelImmediatelyChargesTheBalance quotes the balance an immediate
// cancellation settles, and refuses it on a declined card at dry run with
// the provider's code translated.
func TestCancelImmediatelyChargesTheBalance(t *testing.T) {
	t.Parallel()
	b := setup(t)
	q, err := b.dryRun(t, noah, shopadapter.ActionCancelSubscription,
		map[string]any{"subscription_id": "Business", "reason_code": "switching", "effective": "immediately"})
	if err != nil {
		t.Fatal(err)
	}
	wantConsequences := []string{"Your access ends now.", "Your outstanding balance of $24.00 will be charged to the card ending 4242 now.",
		"You will not be charged on April 20, 2026."}
	if diff := cmp.Diff(wantConsequences, q.Consequences); diff != "" {
		t.Errorf("consequences (-want +got):\n%s", diff)
	}
	if q.AmountCents == nil || *q.AmountCents != 2400 || !q.EffectiveAt.Equal(testNow) {
		t.Errorf("amount %v effective %v, want 2400 now", q.AmountCents, q.EffectiveAt)
	}

	_, err = b.dryRun(t, marcus, shopadapter.ActionCancelSubscription,
		map[string]any{"subscription_id": "Business", "reason_code": "too_expensive", "effective": "immediately"})
	ae := wantError(t, err, "payment_method_declined", adapter.Refused)
	if ae.Retryable || ae.Hint != "Ask the customer to update their card; do not retry the cancellation." {
		t.Errorf("declined: retryable %t hint %q", ae.Retryable, ae.Hint)
	}
	if _, err := b.dryRun(t, marcus, shopadapter.ActionCancelSubscription,
		map[string]any{"subscription_id": "Business", "reason_code": "too_expensive", "effective": "end_of_period"}); err != nil {
		t.Errorf("at period end nothing is charged, so the declined card does not matter: %v", err)
	}
}

// TestStateRefusals covers the refusals that come from an object's state:
// each is seen at dry run, before anything could be sent.
func TestStateRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cases := []struct {
		name      string
		principal adapter.Principal
		action    string
		args      map[string]any
		code      string
		policy    bool
		hint      string
	}{
		{"cancel a cancelled plan", hannah, shopadapter.ActionCancelSubscription,
			map[string]any{"subscription_id": "Pro", "reason_code": "other", "effective": "end_of_period"}, "already_cancelled", false, ""},
		{"reinstate an active plan", jordan, shopadapter.ActionReinstateSubscription,
			map[string]any{"subscription_id": "Starter"}, "not_cancelled", false, ""},
		{"receipt of an upcoming invoice", jordan, shopadapter.ActionResendReceipt,
			map[string]any{"invoice_id": "upcoming Pro invoice"}, "invoice_not_paid", false, ""},
		{"address of a shipped order", priya, shopadapter.ActionChangeShippingAddress,
			map[string]any{"order_id": "shipped", "address": map[string]any{"name": "P", "line1": "1 Road", "city": "Pune", "postal_code": "411001", "country": "IN"}},
			"order_already_fulfilled", true, "The parcel has left; a person can arrange a redirect with the carrier."},
		{"address of a packed order", priya, shopadapter.ActionChangeShippingAddress,
			map[string]any{"order_id": "fulfilled", "address": map[string]any{"name": "P", "line1": "1 Road", "city": "Pune", "postal_code": "411001", "country": "IN"}},
			"order_already_fulfilled", true, "The parcel has left; a person can arrange a redirect with the carrier."},
		{"country that does not exist", jordan, shopadapter.ActionChangeShippingAddress,
			map[string]any{"order_id": "standing desk mat", "address": map[string]any{"name": "J", "line1": "1 Road", "city": "X", "postal_code": "1", "country": "XX"}},
			adapter.CodeInvalidArguments, false, ""},
		{"description unchanged", operator, shopadapter.ActionUpdateProductDesc,
			map[string]any{"product_id": "LAMP-WAL-01", "description": "Solid walnut base, linen shade, warm 2700 K LED bulb included."}, "no_change", false, ""},
		{"price through the description action", operator, shopadapter.ActionUpdateProductDesc,
			map[string]any{"product_id": "LAMP-WAL-01", "description": "x", "price_cents": 1}, adapter.CodeInvalidArguments, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.dryRun(t, tc.principal, tc.action, tc.args)
			ae := wantError(t, err, tc.code, adapter.Refused)
			if ae.PolicyRefusal != tc.policy || (tc.hint != "" && ae.Hint != tc.hint) {
				t.Errorf("policy %t hint %q, want %t %q", ae.PolicyRefusal, ae.Hint, tc.policy, tc.hint)
			}
		})
	}
}

// TestProductPatchCarriesOnlyTheDescription checks that the shop saw a
// change of the description and of nothing else.
func TestProductPatchCarriesOnlyTheDescription(t *testing.T) {
	t.Parallel()
	b := setup(t)
	args := map[string]any{"product_id": "Walnut desk lamp", "description": "Walnut and linen."}
	call, _ := b.mustExecute(t, operator, shopadapter.ActionUpdateProductDesc, args, "key-p")
	var effects []demoshop.LedgerEntry
	b.shopCall(t, "GET", "/_ledger?request_id=key-p", nil, &effects)
	if len(effects) != 1 {
		t.Fatalf("effects %v", effects)
	}
	var data struct {
		Changes map[string]map[string]any `json:"changes"`
	}
	if err := json.Unmarshal(effects[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{"description": {
		"from": "Solid walnut base, linen shade, warm 2700 K LED bulb included.", "to": "Walnut and linen."}}
	if diff := cmp.Diff(want, data.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	var after demoshop.Product
	b.shopCall(t, "GET", "/products/"+call.Quote.Target.ID, nil, &after)
	if after.PriceCents != 8900 || after.Stock != 14 || after.Name != "Walnut desk lamp" {
		t.Errorf("product after: %+v", after)
	}
}
