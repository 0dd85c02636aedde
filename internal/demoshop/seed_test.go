package demoshop_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"countersign/internal/demoshop"
)

func TestSeedIsIdempotent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	count := func() (n int) {
		t.Helper()
		err := b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM shop.customers) + (SELECT count(*) FROM shop.orders)
			+ (SELECT count(*) FROM shop.subscriptions) + (SELECT count(*) FROM shop.invoices)
			+ (SELECT count(*) FROM shop.products)`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := demoshop.Seed(ctx, b.pool, testNow); err != nil {
		t.Fatal(err)
	}
	first := count()
	if err := demoshop.Seed(ctx, b.pool, testNow.AddDate(0, 0, 3)); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != first || first == 0 {
		t.Errorf("rows after second seed = %d, after first = %d; want equal and not zero", got, first)
	}
	if got := len(b.ledger(t, "")); got != 0 {
		t.Errorf("seeding recorded %d ledger effects, want 0", got)
	}
}

func TestSeedDemoCustomer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := demoshop.Seed(context.Background(), b.pool, testNow); err != nil {
		t.Fatal(err)
	}
	customers := decode[demoshop.List[demoshop.Customer]](t,
		b.call(t, http.MethodGet, "/customers?email="+url.QueryEscape(demoshop.DemoCustomerEmail), nil, http.StatusOK))
	if len(customers.Data) != 1 {
		t.Fatalf("customers with the demo email = %d, want 1", len(customers.Data))
	}
	demo := customers.Data[0]

	subs := decode[demoshop.List[demoshop.Subscription]](t,
		b.call(t, http.MethodGet, "/customers/"+demo.ID+"/subscriptions", nil, http.StatusOK)).Data
	var pro *demoshop.Subscription
	for i := range subs {
		if subs[i].Plan == "Pro" && subs[i].Site == "acme.example" {
			pro = &subs[i]
		}
	}
	if pro == nil || pro.Status != demoshop.SubscriptionActive || pro.UpcomingInvoiceID == nil {
		t.Fatalf("demo customer has no active Pro plan on acme.example with an upcoming invoice: %+v", subs)
	}
	paid := decode[demoshop.List[demoshop.Invoice]](t,
		b.call(t, http.MethodGet, "/invoices?status=paid&subscription_id="+pro.ID, nil, http.StatusOK)).Data
	if len(paid) != 1 || len(paid[0].Receipts) != 1 {
		t.Errorf("paid invoices of the Pro plan = %+v, want one with one receipt", paid)
	}

	orders := decode[demoshop.List[demoshop.Order]](t,
		b.call(t, http.MethodGet, "/customers/"+demo.ID+"/orders", nil, http.StatusOK)).Data
	delivered := map[int]demoshop.Order{}
	var open int
	for _, o := range orders {
		if o.DeliveredAt == nil {
			if o.FulfilmentStatus == demoshop.FulfilmentPending {
				open++
			}
			continue
		}
		delivered[int(testNow.Sub(*o.DeliveredAt).Hours()/24)] = o
	}
	for _, days := range []int{5, 20, 45, 90} {
		if _, ok := delivered[days]; !ok {
			t.Errorf("demo customer has no order delivered %d days ago", days)
		}
	}
	if !delivered[20].Damaged {
		t.Errorf("order delivered 20 days ago is not marked damaged: %+v", delivered[20])
	}
	if open != 1 {
		t.Errorf("demo customer has %d pending orders, want 1", open)
	}
}

func TestSeedHasAmbiguityAndDeclinedCard(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if err := demoshop.Seed(ctx, b.pool, testNow); err != nil {
		t.Fatal(err)
	}
	var twoPro, declined, outOfStock int
	err := b.pool.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM (SELECT customer_id FROM shop.subscriptions WHERE plan = 'Pro'
		                              GROUP BY customer_id HAVING count(*) > 1) x),
		       (SELECT count(*) FROM shop.subscriptions WHERE payment_method_status = 'declined' AND balance_cents > 0),
		       (SELECT count(*) FROM shop.products WHERE stock = 0)`).Scan(&twoPro, &declined, &outOfStock)
	if err != nil {
		t.Fatal(err)
	}
	if twoPro == 0 || declined == 0 || outOfStock == 0 {
		t.Errorf("customers with two Pro plans = %d, declined cards with a balance = %d, products out of stock = %d; want each > 0",
			twoPro, declined, outOfStock)
	}
}
