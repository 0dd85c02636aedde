package demoshop_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"countersign/internal/demoshop"
)

type jsonObject = map[string]any

func (b *testBundle) subscription(t *testing.T, f demoshop.SubscriptionFixture) demoshop.Subscription {
	t.Helper()
	if f.CustomerID == "" {
		f.CustomerID = b.customer(t).ID
	}
	sub, err := b.shop.CreateSubscription(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func ledgerData(t *testing.T, e demoshop.LedgerEntry) jsonObject {
	t.Helper()
	var m jsonObject
	if err := json.Unmarshal(e.Data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCancelAtPeriodEnd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{BalanceCents: 700, CardDeclined: true})
	resp, err := b.send(t, http.MethodPatch, "/subscriptions/"+sub.ID,
		jsonObject{"status": "cancelled", "cancel_at_period_end": true, "cancel_reason": "too_expensive"}, "req-cancel-1")
	if err != nil || resp.status != http.StatusOK {
		t.Fatalf("cancel: %v %d %s", err, resp.status, resp.body)
	}
	got := decode[demoshop.Subscription](t, resp)
	if got.Status != demoshop.SubscriptionCancelled || !got.CancelAtPeriodEnd || got.EndedAt != nil ||
		got.CancelledAt == nil || !got.CancelledAt.Equal(testNow) || *got.CancelReason != "too_expensive" ||
		got.Version != sub.Version+1 || got.BalanceCents != 700 {
		t.Errorf("after cancelling at period end: %+v", got)
	}
	if resp.header.Get("X-Request-Id") != "req-cancel-1" {
		t.Errorf("X-Request-Id echoed as %q", resp.header.Get("X-Request-Id"))
	}
	entries := b.ledger(t, "?request_id=req-cancel-1")
	if len(entries) != 1 || entries[0].Kind != demoshop.KindSubscriptionCancelled || entries[0].Object != sub.ID {
		t.Fatalf("ledger = %+v, want one subscription.cancelled on %s", entries, sub.ID)
	}
	if data := ledgerData(t, entries[0]); data["effective"] != "end_of_period" || data["charged_cents"] != 0.0 {
		t.Errorf("ledger data = %v", data)
	}
	b.wantError(t, http.MethodPatch, "/subscriptions/"+sub.ID, jsonObject{"status": "cancelled"},
		http.StatusConflict, "subscription_already_cancelled")
	if n := len(b.ledger(t, "?object="+sub.ID)); n != 1 {
		t.Errorf("ledger rows for the subscription = %d, want 1", n)
	}
}

func TestCancelImmediatelyChargesBalance(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{BalanceCents: 1850})
	got := decode[demoshop.Subscription](t, b.call(t, http.MethodPatch, "/subscriptions/"+sub.ID,
		jsonObject{"status": "cancelled", "cancel_at_period_end": false, "cancel_reason": "switching"}, http.StatusOK))
	if got.BalanceCents != 0 || got.EndedAt == nil || !got.EndedAt.Equal(testNow) || got.CancelAtPeriodEnd {
		t.Errorf("after cancelling immediately: %+v", got)
	}
	entries := b.ledger(t, "?object="+sub.ID)
	if len(entries) != 1 {
		t.Fatalf("ledger = %+v", entries)
	}
	if data := ledgerData(t, entries[0]); data["effective"] != "immediately" || data["charged_cents"] != 1850.0 {
		t.Errorf("ledger data = %v", data)
	}
}

func TestCancelImmediatelyWithDeclinedCard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{BalanceCents: 1850, CardDeclined: true})
	if sub.PaymentMethod.Status != demoshop.PaymentMethodDeclined {
		t.Fatalf("payment method = %+v, want declined visible before the call", sub.PaymentMethod)
	}
	e := b.wantError(t, http.MethodPatch, "/subscriptions/"+sub.ID,
		jsonObject{"status": "cancelled", "cancel_reason": "other"}, http.StatusPaymentRequired, "card_declined")
	if e.Type != "card_error" || e.DeclineCode != "insufficient_funds" {
		t.Errorf("error = %+v, want card_error with decline_code insufficient_funds", e)
	}
	after := decode[demoshop.Subscription](t, b.call(t, http.MethodGet, "/subscriptions/"+sub.ID, nil, http.StatusOK))
	if after.Status != demoshop.SubscriptionActive || after.Version != sub.Version || after.BalanceCents != 1850 {
		t.Errorf("a declined cancellation changed the subscription: %+v", after)
	}
	if got := b.ledger(t, ""); len(got) != 0 {
		t.Errorf("a declined cancellation recorded %+v", got)
	}
}

func TestReinstate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{})
	b.call(t, http.MethodPatch, "/subscriptions/"+sub.ID, jsonObject{"status": "cancelled", "cancel_at_period_end": true}, http.StatusOK)
	b.call(t, http.MethodPost, "/invoices/"+*sub.UpcomingInvoiceID+"/void", nil, http.StatusOK)

	got := decode[demoshop.Subscription](t, b.call(t, http.MethodPatch, "/subscriptions/"+sub.ID, jsonObject{"status": "active"}, http.StatusOK))
	if got.Status != demoshop.SubscriptionActive || got.CancelledAt != nil || got.CancelReason != nil || got.CancelAtPeriodEnd ||
		got.Version != sub.Version+2 {
		t.Errorf("after reinstating: %+v", got)
	}
	if got.UpcomingInvoiceID == nil || *got.UpcomingInvoiceID == *sub.UpcomingInvoiceID {
		t.Errorf("reinstating did not bill the next period again: upcoming invoice %v", got.UpcomingInvoiceID)
	}
	kinds := []string{}
	for _, e := range b.ledger(t, "") {
		kinds = append(kinds, e.Kind)
	}
	want := []string{demoshop.KindSubscriptionCancelled, demoshop.KindInvoiceVoided, demoshop.KindSubscriptionReinstated}
	if len(kinds) != 3 || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] {
		t.Errorf("ledger kinds = %v, want %v", kinds, want)
	}
	b.wantError(t, http.MethodPatch, "/subscriptions/"+sub.ID, jsonObject{"status": "active"}, http.StatusConflict, "subscription_not_cancelled")
}

func TestReinstateAfterPeriodEnd(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{Status: demoshop.SubscriptionCancelled, PeriodEnd: *daysAgo(1)})
	b.wantError(t, http.MethodPatch, "/subscriptions/"+sub.ID, jsonObject{"status": "active"}, http.StatusConflict, "subscription_ended")
}

func TestSubscriptionExpectedVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{})
	e := b.wantError(t, http.MethodPatch, "/subscriptions/"+sub.ID,
		jsonObject{"status": "cancelled", "expected_version": sub.Version + 1}, http.StatusConflict, "version_conflict")
	if e.CurrentVersion != sub.Version {
		t.Errorf("current_version = %d, want %d", e.CurrentVersion, sub.Version)
	}
	b.call(t, http.MethodPatch, "/subscriptions/"+sub.ID, jsonObject{"status": "cancelled", "expected_version": sub.Version}, http.StatusOK)
}

func TestSubscriptionPatchValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{})
	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"no status", jsonObject{}, http.StatusBadRequest, "parameter_missing"},
		{"unknown status", jsonObject{"status": "paused"}, http.StatusBadRequest, "parameter_invalid"},
		{"unknown field", jsonObject{"status": "cancelled", "plan": "Free"}, http.StatusBadRequest, "parameter_unknown"},
		{"reason on reinstate", jsonObject{"status": "active", "cancel_reason": "x"}, http.StatusBadRequest, "parameter_invalid"},
		{"wrong type", jsonObject{"status": "cancelled", "cancel_at_period_end": "yes"}, http.StatusBadRequest, "parameter_invalid"},
		{"not JSON", "{status:", http.StatusBadRequest, "body_invalid"},
		{"no body", nil, http.StatusBadRequest, "parameter_missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.wantError(t, http.MethodPatch, "/subscriptions/"+sub.ID, tt.body, tt.status, tt.code)
		})
	}
	b.wantError(t, http.MethodPatch, "/subscriptions/sub_missing", jsonObject{"status": "cancelled"}, http.StatusNotFound, "resource_missing")
	if got := b.ledger(t, ""); len(got) != 0 {
		t.Errorf("refused calls recorded %+v", got)
	}
}
