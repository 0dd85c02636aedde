package demoshop_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/demoshop"
)

// readFixture is one of everything, for the read tests.
type readFixture struct {
	customer demoshop.Customer
	sub      demoshop.Subscription
	products []demoshop.Product
	order    demoshop.Order
	refund   demoshop.Refund
}

func newReadFixture(t *testing.T, b *testBundle) readFixture {
	t.Helper()
	ctx := context.Background()
	var f readFixture
	var err error
	f.customer, err = b.shop.CreateCustomer(ctx, demoshop.CustomerFixture{
		Name: "Ada Byron", Email: "ada@example.test", Sites: []string{"ada.example", "ada.shop"},
		RiskScore: 40, InternalNotes: "VIP",
	})
	if err != nil {
		t.Fatal(err)
	}
	f.sub, err = b.shop.CreateSubscription(ctx, demoshop.SubscriptionFixture{
		CustomerID: f.customer.ID, Site: "ada.shop", Plan: "Pro", PriceCents: 4900,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []demoshop.ProductFixture{
		{Name: "Kettle", PriceCents: 3000, Stock: 5, Reserved: 2},
		{Name: "Mug", PriceCents: 900, Stock: 0},
	} {
		prod, err := b.shop.CreateProduct(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		f.products = append(f.products, prod)
	}
	f.order, err = b.shop.CreateOrder(ctx, demoshop.OrderFixture{
		CustomerID:    f.customer.ID,
		Items:         []demoshop.ItemFixture{{ProductID: f.products[0].ID, Quantity: 2}, {ProductID: f.products[1].ID}},
		ShippingCents: 700,
		DeliveredAt:   daysAgo(30),
	})
	if err != nil {
		t.Fatal(err)
	}
	f.refund, err = b.shop.CreateRefund(ctx, demoshop.RefundFixture{OrderID: f.order.ID, AmountCents: 900, Reason: "damaged"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestReadsAnswerWithInternalFields(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := newReadFixture(t, b)
	tests := []struct {
		path     string
		internal []string // checked on the object, or on the first item of a list
	}{
		{"/customers?email=ADA@example.test", []string{"risk_score", "fraud_flag", "internal_notes", "processor_customer_id"}},
		{"/customers/" + f.customer.ID, []string{"risk_score", "fraud_flag", "internal_notes", "processor_customer_id"}},
		{"/customers/" + f.customer.ID + "/subscriptions", []string{"margin_cents", "processor_subscription_id", "internal_notes"}},
		{"/customers/" + f.customer.ID + "/orders", []string{"risk_score", "fraud_flag", "margin_cents", "internal_notes"}},
		{"/subscriptions/" + f.sub.ID, []string{"margin_cents", "processor_subscription_id", "internal_notes"}},
		{"/invoices/" + *f.sub.UpcomingInvoiceID, []string{"processor_invoice_id", "internal_notes"}},
		{"/invoices?subscription_id=" + f.sub.ID + "&status=upcoming", []string{"processor_invoice_id", "internal_notes"}},
		{"/orders/" + f.order.ID, []string{"risk_score", "fraud_flag", "margin_cents", "internal_notes"}},
		{"/refunds?order_id=" + f.order.ID, []string{"processor_refund_id"}},
		{"/products/" + f.products[0].ID, []string{"cost_cents", "margin_cents", "supplier_notes"}},
		{"/products?ids=" + f.products[0].ID, []string{"cost_cents", "margin_cents", "supplier_notes"}},
		{"/inventory/" + f.products[0].ID, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			obj := decode[map[string]json.RawMessage](t, b.call(t, http.MethodGet, tt.path, nil, http.StatusOK))
			if data, ok := obj["data"]; ok {
				var items []map[string]json.RawMessage
				if err := json.Unmarshal(data, &items); err != nil || len(items) != 1 {
					t.Fatalf("data = %s, want one item", data)
				}
				obj = items[0]
			}
			for _, name := range tt.internal {
				if _, ok := obj[name]; !ok {
					t.Errorf("answer lacks internal field %q", name)
				}
			}
		})
	}
}

func TestCustomerReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := newReadFixture(t, b)
	got := decode[demoshop.Customer](t, b.call(t, http.MethodGet, "/customers/"+f.customer.ID, nil, http.StatusOK))
	if diff := cmp.Diff(f.customer, got); diff != "" {
		t.Errorf("GET /customers/{id} (-want +got):\n%s", diff)
	}
	if domains := []string{got.Sites[0].Domain, got.Sites[1].Domain}; !cmp.Equal(domains, []string{"ada.example", "ada.shop"}) {
		t.Errorf("sites = %v", domains)
	}
	subs := decode[demoshop.List[demoshop.Subscription]](t,
		b.call(t, http.MethodGet, "/customers/"+f.customer.ID+"/subscriptions", nil, http.StatusOK))
	if len(subs.Data) != 1 || subs.Data[0].Site != "ada.shop" || subs.Data[0].Plan != "Pro" {
		t.Errorf("subscriptions = %+v, want the Pro plan on ada.shop", subs.Data)
	}
	none := decode[demoshop.List[demoshop.Customer]](t, b.call(t, http.MethodGet, "/customers?email=nobody@example.test", nil, http.StatusOK))
	if len(none.Data) != 0 || none.HasMore {
		t.Errorf("unknown email found %+v", none)
	}
	for _, path := range []string{"/customers/cus_missing", "/customers/cus_missing/subscriptions", "/customers/cus_missing/orders"} {
		b.wantError(t, http.MethodGet, path, nil, http.StatusNotFound, "resource_missing")
	}
}

func TestOrderReadHasTotals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := newReadFixture(t, b)
	got := decode[demoshop.Order](t, b.call(t, http.MethodGet, "/orders/"+f.order.ID, nil, http.StatusOK))
	want := struct{ subtotal, total, refunded, refundable int64 }{2*3000 + 900, 2*3000 + 900 + 700, 900, 2*3000 + 700}
	have := struct{ subtotal, total, refunded, refundable int64 }{got.SubtotalCents, got.TotalCents, got.AmountRefundedCents, got.RefundableCents}
	if want != have {
		t.Errorf("subtotal, total, refunded, refundable = %+v, want %+v", have, want)
	}
	if len(got.Items) != 2 || got.Items[0].AmountCents != 6000 || *got.Items[0].ProductID != f.products[0].ID {
		t.Errorf("items = %+v", got.Items)
	}
	if !got.DeliveredAt.Equal(*daysAgo(30)) || got.FulfilmentStatus != demoshop.FulfilmentDelivered {
		t.Errorf("delivered_at = %v, status %s; want %v, delivered", got.DeliveredAt, got.FulfilmentStatus, daysAgo(30))
	}
	refunds := decode[demoshop.List[demoshop.Refund]](t, b.call(t, http.MethodGet, "/refunds?order_id="+f.order.ID, nil, http.StatusOK))
	if diff := cmp.Diff([]demoshop.Refund{f.refund}, refunds.Data); diff != "" {
		t.Errorf("GET /refunds (-want +got):\n%s", diff)
	}
	b.wantError(t, http.MethodGet, "/orders/ord_0000000000000000", nil, http.StatusNotFound, "resource_missing")
}

func TestInvoiceReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := newReadFixture(t, b)
	all := decode[demoshop.List[demoshop.Invoice]](t, b.call(t, http.MethodGet, "/invoices?subscription_id="+f.sub.ID, nil, http.StatusOK))
	if len(all.Data) != 2 {
		t.Fatalf("invoices of the subscription = %d, want 2 (paid and upcoming)", len(all.Data))
	}
	paid := decode[demoshop.List[demoshop.Invoice]](t, b.call(t, http.MethodGet, "/invoices?subscription_id="+f.sub.ID+"&status=paid", nil, http.StatusOK))
	if len(paid.Data) != 1 || paid.Data[0].ReceiptsSent != 1 || len(paid.Data[0].Receipts) != 1 {
		t.Fatalf("paid invoices = %+v, want one with its receipt", paid.Data)
	}
	if got := paid.Data[0].Receipts[0].SentTo; got != "ada@example.test" {
		t.Errorf("receipt sent to %q", got)
	}
	one := decode[demoshop.Invoice](t, b.call(t, http.MethodGet, "/invoices/"+*f.sub.UpcomingInvoiceID, nil, http.StatusOK))
	if one.Status != demoshop.InvoiceUpcoming || one.AmountCents != 4900 || !one.PeriodStart.Equal(f.sub.CurrentPeriodEnd) {
		t.Errorf("upcoming invoice = %+v", one)
	}
	b.wantError(t, http.MethodGet, "/invoices?status=overdue", nil, http.StatusBadRequest, "parameter_invalid")
	b.wantError(t, http.MethodGet, "/invoices/in_missing", nil, http.StatusNotFound, "resource_missing")
}

func TestProductReads(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := newReadFixture(t, b)
	list := decode[demoshop.List[demoshop.Product]](t, b.call(t, http.MethodGet,
		"/products?ids="+f.products[1].ID+",prod_missing,"+f.products[0].ID, nil, http.StatusOK))
	if diff := cmp.Diff([]demoshop.Product{f.products[1], f.products[0]}, list.Data); diff != "" {
		t.Errorf("GET /products?ids= keeps the order asked and skips unknown ids (-want +got):\n%s", diff)
	}
	if got := f.products[0].MarginCents; got != 3000-1200 {
		t.Errorf("margin_cents = %d, want price less cost", got)
	}
	inv := decode[demoshop.Inventory](t, b.call(t, http.MethodGet, "/inventory/"+f.products[0].ID, nil, http.StatusOK))
	if inv.Stock != 5 || inv.Reserved != 2 || inv.Available != 3 || !inv.InStock {
		t.Errorf("inventory = %+v, want 5 in stock, 2 reserved, 3 available", inv)
	}
	empty := decode[demoshop.Inventory](t, b.call(t, http.MethodGet, "/inventory/"+f.products[1].ID, nil, http.StatusOK))
	if empty.InStock || empty.Available != 0 {
		t.Errorf("inventory of an out-of-stock product = %+v", empty)
	}
	b.wantError(t, http.MethodGet, "/inventory/prod_missing", nil, http.StatusNotFound, "resource_missing")
	b.wantError(t, http.MethodGet, "/products?limit=0", nil, http.StatusBadRequest, "parameter_invalid_integer")
}

func TestUnknownRoute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.wantError(t, http.MethodGet, "/charges", nil, http.StatusNotFound, "unrecognized_request_url")
	b.wantError(t, http.MethodDelete, "/refunds", nil, http.StatusNotFound, "unrecognized_request_url")
}

func TestReadsRecordNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := newReadFixture(t, b)
	for _, path := range []string{"/customers/" + f.customer.ID, "/orders/" + f.order.ID, "/products/" + f.products[0].ID} {
		b.call(t, http.MethodGet, path, nil, http.StatusOK)
	}
	if got := b.ledger(t, ""); len(got) != 0 {
		t.Errorf("reads recorded effects: %+v", got)
	}
}
