package httpadapter_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/adapter/conformance"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// paymentsBackend connects testdata/example/payments.json to a fresh
// Stripe-shaped payments system, for the conformance suite.
func paymentsBackend(t *testing.T, tr http.RoundTripper) adaptertest.Backend {
	ps := startPayments(t)
	raw, err := os.ReadFile("testdata/example/payments.json")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PAYMENTS_URL": ps.URL, "PAYMENTS_SECRET_KEY": paymentsKey}
	a, err := httpadapter.Load("payments.json", raw, httpadapter.Config{Now: clock,
		Ledger:     adapter.NewLedger(store.New(dbtest.New(t)), clock),
		HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		Getenv:     func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	return adaptertest.Backend{System: a,
		Effects: func(_ *testing.T, key string) int { return ps.effects(key) },
		Fault: func(_ *testing.T, f adaptertest.Fault) {
			ps.mu.Lock()
			defer ps.mu.Unlock()
			ps.fault = f
		}}
}

// paymentsFixture is the conformance fixture of startPayments's records.
func paymentsFixture() adaptertest.Fixture {
	refund := map[string]any{"charge_id": "ch_1", "amount_cents": 100, "reason": "requested_by_customer"}
	return adaptertest.Fixture{
		Principal: ada,
		Other:     adapter.Principal{CustomerRef: "bob@example.com"},
		Resolve:   adaptertest.Reference{Kind: "charge", Ref: "walnut", WantID: "ch_1"},
		Ambiguous: adaptertest.Reference{Kind: "charge", Ref: "lamp"},
		Foreign:   adaptertest.Reference{Kind: "charge", Ref: "ch_4", WantID: "ch_4"},
		Write:     adaptertest.Call{Action: "refund_charge", Args: refund},
		Refused:   adaptertest.Call{Action: "refund_charge", Args: map[string]any{"charge_id": "ch_3", "amount_cents": 100, "reason": "duplicate"}},
		Refusal: adaptertest.Answer{Status: 400, WantCode: "already_refunded",
			Body: `{"error": {"type": "invalid_request_error", "code": "charge_already_refunded", "message": "Charge has already been refunded."}}`},
		Reads: []adaptertest.Read{{Tool: "get_charge", Args: map[string]any{"charge_id": "walnut lamp"}}, {Tool: "list_charges", Args: map[string]any{}}},
		Every: []adaptertest.Varied{{Call: adaptertest.Call{Action: "refund_charge", Args: refund},
			Other: map[string][]any{"charge_id": {"ch_2"}, "amount_cents": {250}, "reason": {"duplicate"}}}},
	}
}

// TestPaymentsExamplePassesTheLiveSuite runs the suite as `countersign
// conformance -system testdata/example/payments.json -fixtures
// testdata/fixtures/payments.json` does, against one Stripe-shaped
// system: the checks one after another, its own fault proxy in front.
func TestPaymentsExamplePassesTheLiveSuite(t *testing.T) {
	t.Parallel()
	ps := startPayments(t)
	fix, _, err := conformance.LoadFixture("testdata/fixtures/payments.json")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PAYMENTS_URL": ps.URL, "PAYMENTS_SECRET_KEY": paymentsKey}
	ledger := adapter.NewLedger(store.New(dbtest.New(t)), time.Now)
	results, err := conformance.RunLive(t.Context(), func(tr http.RoundTripper) (conformance.LiveBackend, error) {
		a, err := httpadapter.LoadFile("testdata/example/payments.json", httpadapter.Config{Ledger: ledger,
			HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second}, Getenv: func(k string) string { return env[k] }})
		return conformance.LiveBackend{System: a, Effects: func(_ context.Context, key string) (int, error) { return ps.effects(key), nil }}, err
	}, fix, conformance.LiveOptions{FaultRoute: "POST /v1/refunds"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(conformance.Checks()) {
		t.Errorf("%d results, want one per check (%d)", len(results), len(conformance.Checks()))
	}
	for _, r := range results {
		if !r.Passed() {
			t.Errorf("FAIL %s: %s", r.Check, strings.Join(r.Problems, "; "))
		}
	}
}
