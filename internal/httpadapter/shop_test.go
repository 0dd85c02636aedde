package httpadapter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

var jordan = adapter.Principal{CustomerRef: demoshop.DemoCustomerEmail}

func daysAgo(n int) *time.Time {
	t := testNow.AddDate(0, 0, -n)
	return &t
}

func raw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRefundPolicyMatchesTheShopAdapter runs the refund policy's edges
// through the file's CEL guards and through the hand-written shop adapter
// over the same shop: both must allow or refuse alike, with the same code,
// the same policy flag, and the same refundable balance in the quote.
func TestRefundPolicyMatchesTheShopAdapter(t *testing.T) {
	t.Parallel()
	delivered := func(days int) func(*demoshop.OrderFixture) {
		return func(f *demoshop.OrderFixture) { f.DeliveredAt = daysAgo(days) }
	}
	lost := func(days int) func(*demoshop.OrderFixture) {
		return func(f *demoshop.OrderFixture) {
			f.FulfilmentStatus = demoshop.FulfilmentNotReceived
			f.PlacedAt = testNow.AddDate(0, 0, -days).Add(-26 * time.Hour)
		}
	}
	cases := []struct {
		name     string
		order    func(*demoshop.OrderFixture)
		refunded int64
		reason   string
		amount   int64
		code     string
	}{
		{"damaged, day 30, the whole balance", delivered(30), 0, "damaged", 8400, ""},
		{"damaged, with shipping", delivered(30), 0, "damaged", 9600, "amount_above_refundable"},
		{"damaged, more than the order", delivered(30), 0, "damaged", 9700, "amount_above_refundable"},
		{"damaged, day 31", delivered(31), 0, "damaged", 100, "outside_refund_window_store_credit"},
		{"damaged, day 60", delivered(60), 0, "damaged", 100, "outside_refund_window_store_credit"},
		{"damaged, day 61", delivered(61), 0, "damaged", 100, "outside_refund_window"},
		{"damaged, after an earlier refund", delivered(5), 1000, "damaged", 7400, ""},
		{"damaged, after an earlier refund, one cent above", delivered(5), 1000, "damaged", 7401, "amount_above_refundable"},
		{"changed mind deducts 15%", delivered(10), 0, "changed_mind", 7140, ""},
		{"changed mind, one cent above", delivered(10), 0, "changed_mind", 7141, "amount_above_refundable"},
		{"wrong item includes shipping", delivered(10), 0, "wrong_item", 9600, ""},
		{"duplicate charge is the full charge", delivered(10), 0, "duplicate_charge", 9600, ""},
		{"duplicate charge, one cent above", delivered(10), 0, "duplicate_charge", 9601, "amount_above_refundable"},
		{"not received, shipped 30 days ago, with shipping", lost(30), 0, "not_received", 9600, ""},
		{"not received, shipped 31 days ago", lost(31), 0, "not_received", 100, "outside_refund_window_store_credit"},
		{"not received, but delivered", delivered(3), 0, "not_received", 100, "reason_does_not_apply"},
		{"damaged, not delivered yet", nil, 0, "damaged", 100, "not_delivered"},
		{"everything refunded already", delivered(3), 9600, "duplicate_charge", 1, "amount_above_refundable"},
	}
	file, shop := connect(t, nil)
	hand := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shop.URL, Token: shop.Token(), Now: clock,
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock)})
	c, err := shop.CreateCustomer(context.Background(), demoshop.CustomerFixture{})
	if err != nil {
		t.Fatal(err)
	}
	p := adapter.Principal{CustomerRef: c.Email}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := demoshop.OrderFixture{CustomerID: c.ID, ShippingCents: 1200,
				Items: []demoshop.ItemFixture{{Name: "Oak bookend", Quantity: 2, UnitPriceCents: 4200}}}
			if tc.order != nil {
				tc.order(&f)
			}
			o, err := shop.CreateOrder(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			if tc.refunded > 0 {
				if _, err := shop.CreateRefund(context.Background(), demoshop.RefundFixture{OrderID: o.ID, AmountCents: tc.refunded}); err != nil {
					t.Fatal(err)
				}
			}
			args := raw(t, map[string]any{"order_id": o.ID, "amount_cents": tc.amount, "reason_code": tc.reason})
			fq, ferr := file.DryRun(context.Background(), p, "issue_refund", args)
			hq, herr := hand.DryRun(context.Background(), p, shopadapter.ActionIssueRefund, args)
			outcome := func(err error) [2]any {
				if err == nil {
					return [2]any{"", false}
				}
				ae, ok := adapter.AsError(err)
				if !ok {
					t.Fatalf("error %v is not structured", err)
				}
				return [2]any{ae.Code, ae.PolicyRefusal}
			}
			if diff := cmp.Diff(outcome(herr), outcome(ferr)); diff != "" {
				t.Errorf("code and policy flag (-shop adapter +file): %s\nfile: %v\nshop adapter: %v", diff, ferr, herr)
			}
			if got := outcome(ferr)[0]; got != tc.code {
				t.Errorf("file: %v, want %q", ferr, tc.code)
			}
			if ferr == nil && herr == nil {
				if *fq.AmountCents != *hq.AmountCents || fq.Reversible {
					t.Errorf("quotes differ: file %v, shop adapter %v", *fq.AmountCents, *hq.AmountCents)
				}
				// The breakdown and the customer's words are the same, line
				// by line, whichever way the shop is connected.
				if diff := cmp.Diff(hq.Lines, fq.Lines); diff != "" {
					t.Errorf("lines (-shop adapter +file):\n%s", diff)
				}
				if diff := cmp.Diff(hq.Customer, fq.Customer); diff != "" {
					t.Errorf("customer facts (-shop adapter +file):\n%s", diff)
				}
				if diff := cmp.Diff(hq.Consequences, fq.Consequences); diff != "" {
					t.Errorf("consequences (-shop adapter +file):\n%s", diff)
				}
			}
		})
	}
}

// TestActionsExecuteAndVerify: the receipt resend, the product edit and
// the address change go through the file's request, land once, and are
// found by its read-back.
func TestActionsExecuteAndVerify(t *testing.T) {
	t.Parallel()
	operator := adapter.Principal{CustomerRef: "ops@shop.example"}
	cases := []struct {
		name      string
		principal adapter.Principal
		action    string
		args      func(t *testing.T, a *testBundle) map[string]any
		effect    string
	}{
		{"receipt", jordan, "resend_receipt", func(t *testing.T, b *testBundle) map[string]any {
			return map[string]any{"invoice_id": b.paidInvoice(t)}
		}, "receipt.sent"},
		{"product", operator, "update_product_description", func(*testing.T, *testBundle) map[string]any {
			return map[string]any{"product_id": "LAMP-WAL-01", "description": "Walnut, linen, warm light."}
		}, "product.updated"},
		{"address", jordan, "change_shipping_address", func(*testing.T, *testBundle) map[string]any {
			return map[string]any{"order_id": "standing desk mat", "address": map[string]any{
				"name": "Jordan Lee", "line1": "2 Road", "city": "Reno", "postal_code": "89501", "country": "us"}}
		}, "order.shipping_address_changed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBundle(t)
			args := raw(t, tc.args(t, b))
			q, err := b.a.DryRun(context.Background(), tc.principal, tc.action, args)
			if err != nil {
				t.Fatalf("dry run: %v", err)
			}
			call := adapter.Call{Action: tc.action, Args: args, IdempotencyKey: "key-1", Quote: q}
			res, err := b.a.Execute(context.Background(), tc.principal, call)
			if err != nil {
				t.Fatalf("execute: %v", err)
			}
			v, err := b.a.Verify(context.Background(), tc.principal, call, &res)
			if err != nil || !v.Verified {
				t.Errorf("verify: %+v, %v", v, err)
			}
			look, err := b.a.Lookup(context.Background(), tc.principal, adapter.Call{Action: tc.action, Args: args, IdempotencyKey: "key-1"})
			if err != nil || len(look.Effects) != 1 || look.Effects[0].Kind != tc.effect {
				t.Errorf("lookup %+v, %v: want one %s", look, err, tc.effect)
			}
			again, err := b.a.Execute(context.Background(), tc.principal, call)
			if err != nil || !again.Deduplicated || again.Reference != res.Reference {
				t.Errorf("repeat %+v, %v: want the first result, deduplicated", again, err)
			}
		})
	}
}

// TestAddressRefusedAfterFulfilment: the file's guard refuses, as a policy,
// before anything is sent; a refusal by the shop itself maps alike.
func TestAddressRefusedAfterFulfilment(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	args := raw(t, map[string]any{"order_id": "walnut lamp", "address": map[string]any{
		"name": "J", "line1": "2 Road", "city": "Reno", "postal_code": "89501", "country": "US"}})
	_, err := b.a.DryRun(context.Background(), jordan, "change_shipping_address", args)
	ae, ok := adapter.AsError(err)
	if !ok || ae.Code != "order_already_fulfilled" || ae.Outcome != adapter.Refused || !ae.PolicyRefusal || ae.Hint == "" {
		t.Fatalf("dry run: %+v, want a policy refusal order_already_fulfilled", err)
	}
	if !strings.Contains(ae.Message, "delivered") {
		t.Errorf("message %q does not say the order is delivered", ae.Message)
	}
}

// TestReadToolsCopyOnlyTheAllowlist: get_order answers exactly the file's
// fields, and list_products caps the catalogue.
func TestReadToolsCopyOnlyTheAllowlist(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	res, err := b.a.Read(context.Background(), jordan, "get_order", raw(t, map[string]any{"order_id": "walnut lamp"}))
	if err != nil {
		t.Fatal(err)
	}
	order := res.Data.(map[string]any)
	var keys []string
	for k := range order {
		keys = append(keys, k)
	}
	want := []string{"amount_refunded_cents", "currency", "damaged", "delivered_at", "fulfilment_status", "id", "items",
		"placed_at", "refundable_cents", "shipped_at", "shipping_address", "shipping_cents", "subtotal_cents", "total_cents"}
	slices.Sort(keys)
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("get_order fields (-want +got):\n%s", diff)
	}
	item := order["items"].([]any)[0].(map[string]any)
	if len(item) != 3 || item["name"] == nil {
		t.Errorf("an item has %v, want name, quantity and amount_cents only", item)
	}
	list, err := b.a.Read(context.Background(), jordan, "list_products", nil)
	if err != nil {
		t.Fatal(err)
	}
	if list.Count != 10 || list.Truncated {
		t.Errorf("list_products: %d, truncated %t; want the 10 products", list.Count, list.Truncated)
	}
}

type testBundle struct {
	a     interface{ adapter.System }
	url   string
	token string
}

func newBundle(t *testing.T) *testBundle {
	a, shop := connect(t, nil)
	return &testBundle{a: a, url: shop.URL, token: shop.Token()}
}

// paidInvoice finds one of Jordan's paid invoices through the shop's API.
func (b *testBundle) paidInvoice(t *testing.T) string {
	t.Helper()
	get := func(path string, out any) {
		req, _ := http.NewRequest(http.MethodGet, b.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+b.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var customers demoshop.List[demoshop.Customer]
	get("/customers?email="+demoshop.DemoCustomerEmail, &customers)
	var invoices demoshop.List[demoshop.Invoice]
	get("/invoices?status=paid&customer_id="+customers.Data[0].ID, &invoices)
	if len(invoices.Data) == 0 {
		t.Fatal("Jordan has no paid invoice")
	}
	return invoices.Data[0].ID
}

// TestContactOnFile: one-time codes go to the e-mail the shop has on file.
func TestContactOnFile(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	dir, ok := b.a.(adapter.ContactDirectory)
	if !ok {
		t.Fatal("a described system with principal.contact is not a ContactDirectory")
	}
	c, err := dir.Contact(context.Background(), adapter.Principal{CustomerRef: "  Customer@Demo.Countersign.Test "})
	if err != nil || c.Email != demoshop.DemoCustomerEmail || c.Name != "Jordan Lee" {
		t.Errorf("contact %+v, %v; want Jordan Lee at %s", c, err, demoshop.DemoCustomerEmail)
	}
	_, err = dir.Contact(context.Background(), adapter.Principal{CustomerRef: "nobody@example.com"})
	if ae, ok := adapter.AsError(err); !ok || ae.Code != "unknown_customer" {
		t.Errorf("contact of a stranger: %v, want unknown_customer", err)
	}
}
