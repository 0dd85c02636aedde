package httpadapter_test

import (
	"context"
	"net/http"
	"os"
	"strconv"
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

// TestPaymentsErrorsMapLikeTheHTTPRules: the example's rules read
// Stripe's {"error": {"type", "code", "message"}} as the HTTP rules would:
// a card network's 402 and the charge's own refusals are refused, a 429
// not sent and retryable, an idempotency_error and a 5xx unknown; each
// write was sent once and applied nothing.
func TestPaymentsErrorsMapLikeTheHTTPRules(t *testing.T) {
	t.Parallel()
	ps := startPayments(t)
	env := map[string]string{"PAYMENTS_URL": ps.URL, "PAYMENTS_SECRET_KEY": paymentsKey}
	a, err := httpadapter.LoadFile("testdata/example/payments.json", httpadapter.Config{Now: clock,
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	stripe := func(typ, code string) string {
		return `{"error": {"type": "` + typ + `", "code": "` + code + `", "message": "…"}}`
	}
	cases := []struct {
		status    int
		body      string
		code      string
		outcome   adapter.Outcome
		retryable bool
	}{
		{402, stripe("card_error", "card_declined"), "card_declined", adapter.Refused, false},
		{400, stripe("invalid_request_error", "charge_already_refunded"), "already_refunded", adapter.Refused, false},
		{400, stripe("invalid_request_error", "amount_too_large"), "amount_too_large", adapter.Refused, false},
		{400, stripe("invalid_request_error", "parameter_invalid_integer"), "payment_refused", adapter.Refused, false},
		{429, stripe("invalid_request_error", "rate_limit"), "rate_limited", adapter.NotSent, true},
		{400, stripe("idempotency_error", ""), "outcome_unknown", adapter.Unknown, false},
		{500, stripe("api_error", ""), "outcome_unknown", adapter.Unknown, false},
	}
	for i, tc := range cases {
		ps.mu.Lock()
		ps.answerNext = &struct {
			status int
			body   string
		}{tc.status, tc.body}
		ps.mu.Unlock()
		key := "k-" + strconv.Itoa(i)
		_, err := refund(t, a, key)
		ae, ok := adapter.AsError(err)
		if !ok || ae.Code != tc.code || ae.Outcome != tc.outcome || ae.Retryable != tc.retryable {
			t.Errorf("%d %s: %v, want %s, %s, retryable %t", tc.status, tc.body, err, tc.code, tc.outcome, tc.retryable)
		}
		if n, e := ps.sends(key), ps.effects(key); n != 1 || e != 0 {
			t.Errorf("%d %s: sent %d times with %d effects, want once, none", tc.status, tc.body, n, e)
		}
	}
}
