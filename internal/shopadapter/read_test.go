package shopadapter_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

func (b *testBundle) read(t *testing.T, p adapter.Principal, tool string, args any) adapter.ReadResult {
	t.Helper()
	res, err := b.adapter.Read(context.Background(), p, tool, raw(t, args))
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// TestGetOrder shows an order as facts with its id and a display name.
func TestGetOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, p := b.newCustomer(t, demoshop.CustomerFixture{Name: "Ada Byron"})
	o := b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) { f.DeliveredAt, f.Damaged = daysAgo(20), true })
	if _, err := b.shop.CreateRefund(context.Background(), demoshop.RefundFixture{OrderID: o.ID, AmountCents: 500}); err != nil {
		t.Fatal(err)
	}
	res := b.read(t, p, "get_order", map[string]any{"order_id": o.ID})
	days := 20
	placed := daysAgo(23)
	shipped := placed.Add(26 * time.Hour)
	want := adapter.ReadResult{Count: 1, Data: shopadapter.OrderView{
		OrderID: o.ID, Display: "Order " + o.ID + " (Oak bookend, delivered 23 Mar)", FulfilmentStatus: "delivered",
		PlacedAt: *placed, ShippedAt: &shipped, DeliveredAt: daysAgo(20), DaysSinceDelivery: &days,
		Items:    []shopadapter.OrderItemView{{Name: "Oak bookend", Quantity: 2, UnitPriceCents: 4200, AmountCents: 8400}},
		Currency: "usd", SubtotalCents: 8400, ShippingCents: 1200, TotalCents: 9600, RefundedCents: 500, RefundableCents: 9100,
		DamageReported: true, Carrier: "UPS", TrackingNumber: o.TrackingNumber,
		ShippingAddress: shopadapter.AddressView{Name: "Ada Byron", Line1: "500 Market Street", Line2: "Suite 210",
			City: "San Francisco", PostalCode: "94105", Country: "US"},
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("get_order (-want +got):\n%s", diff)
	}
}

// TestListsAreCapped returns at most 10 of a list, with Count the total
// and Truncated set.
func TestListsAreCapped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, p := b.newCustomer(t, demoshop.CustomerFixture{})
	for i := range 12 {
		b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) {
			f.PlacedAt = testNow.Add(-time.Duration(i) * time.Hour)
			if i%3 == 0 {
				f.DeliveredAt = daysAgo(i + 1)
			}
		})
	}
	for i := range 11 {
		_, err := b.shop.CreateSubscription(context.Background(), demoshop.SubscriptionFixture{CustomerID: c.ID,
			Site: fmt.Sprintf("site%d.example", i), Plan: "Starter"})
		if err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		tool      string
		args      map[string]any
		listed    int
		count     int
		truncated bool
	}{
		{"list_orders", nil, 10, 12, true},
		{"list_orders", map[string]any{"limit": 3}, 3, 12, true},
		{"list_orders", map[string]any{"status": "delivered"}, 4, 4, false},
		{"list_orders", map[string]any{"status": "shipped"}, 0, 0, false},
		{"list_subscriptions", nil, 10, 11, true},
	}
	for _, tc := range cases {
		res := b.read(t, p, tc.tool, tc.args)
		listed := 0
		switch data := res.Data.(type) {
		case []shopadapter.OrderSummary:
			listed = len(data)
			for i := 1; i < len(data); i++ {
				if data[i].PlacedAt.After(data[i-1].PlacedAt) {
					t.Errorf("%s: not newest first", tc.tool)
				}
			}
		case []shopadapter.SubscriptionView:
			listed = len(data)
		}
		if listed != tc.listed || res.Count != tc.count || res.Truncated != tc.truncated {
			t.Errorf("%s %v: listed %d count %d truncated %t, want %d %d %t", tc.tool, tc.args,
				listed, res.Count, res.Truncated, tc.listed, tc.count, tc.truncated)
		}
	}
	_, err := b.adapter.Read(context.Background(), p, "list_orders", raw(t, map[string]any{"limit": 11}))
	wantError(t, err, adapter.CodeInvalidArguments, adapter.Refused)
}

// TestCheckInventory reports availability by product id, and the ids the
// shop does not know.
func TestCheckInventory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	lamp, err := b.adapter.Resolve(context.Background(), operator, shopadapter.KindProduct, "LAMP-WAL-01")
	if err != nil {
		t.Fatal(err)
	}
	throw, err := b.adapter.Resolve(context.Background(), operator, shopadapter.KindProduct, "THROW-LIN-03")
	if err != nil {
		t.Fatal(err)
	}
	res := b.read(t, operator, "check_inventory", map[string]any{"product_ids": lamp.ID + ", " + throw.ID + ",prod_0000000000000000"})
	restock := testNow.AddDate(0, 0, 12)
	want := adapter.ReadResult{Count: 2, Data: shopadapter.InventoryReport{
		Items: []shopadapter.InventoryView{
			{ProductID: lamp.ID, SKU: "LAMP-WAL-01", Name: "Walnut desk lamp", Available: 14, InStock: true},
			{ProductID: throw.ID, SKU: "THROW-LIN-03", Name: "Linen throw blanket", Available: 0, InStock: false, RestockAt: &restock},
		},
		NotFound: []string{"prod_0000000000000000"},
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("check_inventory (-want +got):\n%s", diff)
	}
	eleven := lamp.ID + ",prod_1,prod_2,prod_3,prod_4,prod_5,prod_6,prod_7,prod_8,prod_9,prod_10"
	_, err = b.adapter.Read(context.Background(), operator, "check_inventory", raw(t, map[string]any{"product_ids": eleven}))
	wantError(t, err, adapter.CodeInvalidArguments, adapter.Refused)
}

// TestReadsAreTheCustomersOnly answers another customer's object as not
// found.
func TestReadsAreTheCustomersOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var invoices demoshop.List[demoshop.Invoice]
	b.shopCall(t, "GET", "/invoices?customer_id="+b.customerID(t, maya), nil, &invoices)
	_, err := b.adapter.Read(context.Background(), jordan, "get_invoice", raw(t, map[string]any{"invoice_id": invoices.Data[0].ID}))
	ae := wantError(t, err, adapter.CodeNotFound, adapter.Refused)
	_, err = b.adapter.Read(context.Background(), jordan, "get_invoice", raw(t, map[string]any{"invoice_id": "in_0000000000000000"}))
	if other := wantError(t, err, adapter.CodeNotFound, adapter.Refused); strings.ReplaceAll(other.Message, "in_0000000000000000", invoices.Data[0].ID) != ae.Message {
		t.Errorf("another customer's invoice reads differently from a missing one: %q vs %q", ae.Message, other.Message)
	}
	res := b.read(t, jordan, "get_invoice", map[string]any{"invoice_id": "paid Pro"})
	v := res.Data.(shopadapter.InvoiceView)
	if v.Status != "paid" || v.ReceiptsSent != 1 || len(v.Receipts) != 1 || v.AmountCents != 4900 {
		t.Errorf("invoice %+v", v)
	}
	// The number printed on the invoice names it too.
	byNumber := b.read(t, jordan, "get_invoice", map[string]any{"invoice_id": strings.ToLower(v.Number)})
	if diff := cmp.Diff(res, byNumber); diff != "" {
		t.Errorf("by number (-by words +by number):\n%s", diff)
	}
}
