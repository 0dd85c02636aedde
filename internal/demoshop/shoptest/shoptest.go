// Package shoptest starts a seeded demo shop over real HTTP for the tests
// of the adapters that connect it, and gives the adapter conformance suite
// (adaptertest) the shop's own view: its effect ledger and its faults.
package shoptest

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/demoshop"
	"countersign/store/dbtest"
)

// Shop is a running seeded demo shop.
type Shop struct {
	*demoshop.Shop
	URL string
}

// Start serves a shop seeded at now from its own database until the test
// ends; an adapter connects it with the shop's Token. The test binary must
// run dbtest.Main.
func Start(t *testing.T, now time.Time) *Shop {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, pool, now); err != nil {
		t.Fatal(err)
	}
	shop := demoshop.New(pool, demoshop.Options{Now: func() time.Time { return now }, Rand: rand.New(rand.NewPCG(1, 2))})
	run, err := demoshop.Start(ctx, shop, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := run.Close(context.Background()); err != nil {
			t.Errorf("close shop: %v", err)
		}
	})
	return &Shop{Shop: shop, URL: run.URL}
}

// Effects counts the shop's ledger rows recorded under key, or all of
// them when key is "", read from GET /_ledger as any client would.
func (s *Shop) Effects(t *testing.T, key string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/_ledger?request_id="+url.QueryEscape(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rows []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&rows); err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// Fault installs the shop fault that plays f on the next call of route,
// e.g. "POST /refunds".
func (s *Shop) Fault(t *testing.T, route string, f adaptertest.Fault) {
	t.Helper()
	rule := demoshop.FaultRule{Route: route}
	switch f {
	case adaptertest.FaultServerError:
		rule.ErrorRate = 1
	case adaptertest.FaultReset:
		rule.ResetRate = 1
	case adaptertest.FaultDropAfterCommit:
		rule.DropAfterCommit = 1
	default:
		t.Fatalf("shoptest: no shop fault plays %q", f)
	}
	if err := s.SetFault(rule); err != nil {
		t.Fatal(err)
	}
}

// Fixture is the conformance fixture of the seeded shop, the same for
// every adapter that connects it: Jordan Lee's walnut lamp order (refunded
// $42.10 for damage), Jordan's delivered orders (ambiguous), Priya's
// pending order (not Jordan's), an address change refused after
// fulfilment, and the shop's 422 answer to a refund above the balance.
func Fixture() adaptertest.Fixture {
	return adaptertest.Fixture{
		Principal: adapter.Principal{CustomerRef: demoshop.DemoCustomerEmail},
		Other:     adapter.Principal{CustomerRef: "priya@natarajan-design.example"},
		Resolve:   adaptertest.Reference{Kind: "order", Ref: "walnut lamp"},
		Ambiguous: adaptertest.Reference{Kind: "order", Ref: "delivered"},
		Foreign:   adaptertest.Reference{Kind: "order", Ref: "pending"},
		Write: adaptertest.Call{Action: "issue_refund",
			Args: map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}},
		Refused: adaptertest.Call{Action: "change_shipping_address", Args: map[string]any{"order_id": "walnut lamp",
			"address": map[string]any{"name": "J", "line1": "2 Road", "city": "Reno", "postal_code": "89501", "country": "US"}}},
		Refusal: adaptertest.Answer{Status: 422, WantCode: "amount_above_refundable",
			Body: `{"error":{"type":"invalid_request_error","code":"amount_too_large","message":"Amount exceeds refundable.","refundable_cents":100}}`},
		Reads: []adaptertest.Read{
			{Tool: "get_order", Args: map[string]any{"order_id": "walnut lamp"}},
			{Tool: "list_orders", Args: map[string]any{}},
			{Tool: "get_invoice", Args: map[string]any{"invoice_id": "paid Starter"}},
		},
		Every: every(),
	}
}

// every is a valid call of each of the shop's write actions, with other
// valid values for the arguments a check cannot make up.
func every() []adaptertest.Varied {
	address := map[string]any{"name": "Jordan Lee", "line1": "2 Road", "city": "Reno", "postal_code": "89501", "country": "US"}
	call := func(action string, args map[string]any) adaptertest.Call {
		return adaptertest.Call{Action: action, Args: args}
	}
	return []adaptertest.Varied{
		{Call: call("cancel_subscription", map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"}),
			Other: map[string][]any{"subscription_id": {"Starter"}}},
		{Call: call("reinstate_subscription", map[string]any{"subscription_id": "Photo add-on"}),
			OtherTarget: &adaptertest.Call{Principal: adapter.Principal{CustomerRef: "hannah.weiss@example.de"}, Action: "reinstate_subscription",
				Args: map[string]any{"subscription_id": "Pro"}}},
		{Call: call("issue_refund", map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}),
			Other: map[string][]any{"order_id": {"pour-over"}}},
		{Call: call("resend_receipt", map[string]any{"invoice_id": "paid Starter"}), Other: map[string][]any{"invoice_id": {"paid Pro"}}},
		{Call: call("update_product_description", map[string]any{"product_id": "LAMP-WAL-01", "description": "Solid walnut, 45 cm."}),
			Other: map[string][]any{"product_id": {"POUR-CER-02"}}},
		{Call: call("change_shipping_address", map[string]any{"order_id": "standing desk mat", "address": address}),
			Other: map[string][]any{"address.country": {"DE"}},
			OtherTarget: &adaptertest.Call{Principal: adapter.Principal{CustomerRef: "priya@natarajan-design.example"},
				Action: "change_shipping_address", Args: map[string]any{"order_id": "pending", "address": address}}},
	}
}
