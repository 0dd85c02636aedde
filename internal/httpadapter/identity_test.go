package httpadapter_test

import (
	"context"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestOneOrderReadsOneBusinessKeyThroughBothConnections: the demo shop
// connected by its description file and by its Go adapter names one order
// with one business key, read from the shop's answer by Resolve and by the
// dry run's quote alike; an object kind that declares no identity has none.
func TestOneOrderReadsOneBusinessKeyThroughBothConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, shop := connect(t, nil)
	hand := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shop.URL, Token: shop.Token(), Now: clock,
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock)})
	c, err := shop.CreateCustomer(ctx, demoshop.CustomerFixture{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := shop.CreateOrder(ctx, demoshop.OrderFixture{CustomerID: c.ID, DeliveredAt: daysAgo(2),
		Items: []demoshop.ItemFixture{{Name: "Oak bookend", Quantity: 1, UnitPriceCents: 4200}}})
	if err != nil {
		t.Fatal(err)
	}
	p := adapter.Principal{CustomerRef: c.Email}
	want := adapter.BusinessKey{Name: shopadapter.IdentityOrderNumber, Value: o.Number}
	if o.Number == "" {
		t.Fatal("the demo shop gave the order no number")
	}
	args := raw(t, map[string]any{"order_id": o.ID, "amount_cents": 1000, "reason_code": "damaged"})
	for _, sys := range []adapter.System{file, hand} {
		target, err := sys.Resolve(ctx, p, "order", o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if target.BusinessKey == nil || *target.BusinessKey != want {
			t.Errorf("%s: Resolve gave the order the key %v, want %v", sys.Name(), target.BusinessKey, want)
		}
		q, err := sys.DryRun(ctx, p, "issue_refund", args)
		if err != nil {
			t.Fatal(err)
		}
		if q.Target.BusinessKey == nil || *q.Target.BusinessKey != want {
			t.Errorf("%s: the quote's target has the key %v, want %v", sys.Name(), q.Target.BusinessKey, want)
		}
		products, err := shop.CreateProduct(ctx, demoshop.ProductFixture{Name: "Lamp", Description: "A lamp.", PriceCents: 100, Stock: 1})
		if err != nil {
			t.Fatal(err)
		}
		if pt, err := sys.Resolve(ctx, p, "product", products.ID); err != nil || pt.BusinessKey != nil {
			t.Errorf("%s: a product, whose kind declares no identity, resolved to %v, %v", sys.Name(), pt.BusinessKey, err)
		}
	}
}
