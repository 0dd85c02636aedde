package shopadapter_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestResolve resolves the seeded customers' words and ids: one match is
// a target, several are an error listing the candidates, none is not
// found.
func TestResolve(t *testing.T) {
	t.Parallel()
	b := setup(t)
	mayaSubs := map[string]string{}
	var list demoshop.List[demoshop.Subscription]
	b.shopCall(t, "GET", "/customers/"+b.customerID(t, maya)+"/subscriptions", nil, &list)
	for _, s := range list.Data {
		mayaSubs[s.Site] = s.ID
	}
	var mayaOrders demoshop.List[demoshop.Order]
	b.shopCall(t, "GET", "/customers/"+b.customerID(t, maya)+"/orders", nil, &mayaOrders)

	cases := []struct {
		name       string
		principal  adapter.Principal
		kind, ref  string
		display    string   // the target's display, when one matches
		candidates []string // the candidates' displays, when ambiguous
		code       string
	}{
		{"plan and site", maya, "subscription", "Pro plan for brightleaf.shop", "Pro plan for brightleaf.shop", nil, ""},
		{"two Pro plans", maya, "subscription", "my Pro plan", "", []string{
			"Pro plan for brightleaf.example, active, renews April 23, 2026",
			"Pro plan for brightleaf.shop, active, renews May 7, 2026"}, adapter.CodeAmbiguous},
		{"id", maya, "subscription", mayaSubs["brightleaf.example"], "Pro plan for brightleaf.example", nil, ""},
		{"plan name", jordan, "subscription", "Pro", "Pro plan for acme.example", nil, ""},
		{"the customer's e-mail in another case", adapter.Principal{CustomerRef: " " + strings.ToUpper(jordan.CustomerRef) + " "},
			"subscription", "Pro", "Pro plan for acme.example", nil, ""},
		{"site label matching several", jordan, "subscription", "acme", "", []string{
			"Photo add-on plan for acme.example, cancelled, access until April 26, 2026",
			"Pro plan for acme.example, active, renews April 30, 2026",
			"Starter plan for acme.shop, active, renews April 21, 2026"}, adapter.CodeAmbiguous},
		{"another customer's subscription", jordan, "subscription", mayaSubs["brightleaf.shop"], "", nil, adapter.CodeNotFound},
		{"a plan the customer does not have", jordan, "subscription", "Business", "", nil, adapter.CodeNotFound},
		{"order by item", jordan, "order", "the walnut lamp", "", nil, ""},
		{"three open orders", priya, "order", "my open order", "", []string{"", "", ""}, adapter.CodeAmbiguous},
		{"another customer's order", jordan, "order", mayaOrders.Data[0].ID, "", nil, adapter.CodeNotFound},
		{"an order id that does not exist", jordan, "order", "ord_0000000000000000", "", nil, adapter.CodeNotFound},
		{"invoice by plan and status", jordan, "invoice", "paid Pro invoice", "", nil, ""},
		{"product by SKU", operator, "product", "lamp-wal-01", "Walnut desk lamp (LAMP-WAL-01)", nil, ""},
		{"product by name", operator, "product", "socks", "Merino wool socks, 3 pairs (SOCK-MER-3)", nil, ""},
		{"unknown customer", adapter.Principal{CustomerRef: "nobody@example.test"}, "order", "lamp", "", nil, "unknown_customer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := b.adapter.Resolve(context.Background(), tc.principal, tc.kind, tc.ref)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.System != "shop" || got.Kind != tc.kind || got.ID == "" || got.Version == "" {
					t.Errorf("target %+v", got)
				}
				if tc.display != "" && got.Display != tc.display {
					t.Errorf("display %q, want %q", got.Display, tc.display)
				}
				return
			}
			ae := wantError(t, err, tc.code, adapter.Refused)
			if tc.candidates == nil {
				return
			}
			var displays []string
			for _, c := range ae.Candidates {
				if c.ID == "" {
					t.Errorf("candidate without an id: %+v", c)
				}
				displays = append(displays, c.Display)
			}
			if tc.candidates[0] == "" {
				if len(displays) != len(tc.candidates) {
					t.Errorf("%d candidates %v, want %d", len(displays), displays, len(tc.candidates))
				}
				return
			}
			if diff := cmp.Diff(tc.candidates, displays); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
}

// TestActionsNeverGuess: an action's id argument takes words too, but an
// ambiguous one is refused at dry run with the candidates.
func TestActionsNeverGuess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.dryRun(t, maya, shopadapter.ActionCancelSubscription,
		map[string]any{"subscription_id": "Pro", "reason_code": "other", "effective": "end_of_period"})
	if ae := wantError(t, err, adapter.CodeAmbiguous, adapter.Refused); len(ae.Candidates) != 2 {
		t.Errorf("candidates %+v", ae.Candidates)
	}
	q, err := b.dryRun(t, jordan, shopadapter.ActionIssueRefund, refundLamp)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Order " + q.Target.ID + " (Walnut desk lamp, delivered 23 Mar)"; q.Target.Display != want {
		t.Errorf("display %q, want %q", q.Target.Display, want)
	}
}

// TestTwoShopsNeverResolveAcross connects an EU and a US shop whose seeded
// objects share their ids: each resolves only its own objects, targets
// carry their system, and keys are per system.
func TestTwoShopsNeverResolveAcross(t *testing.T) {
	t.Parallel()
	euShop, euURL := startShop(t)
	_, usURL := startShop(t)
	st := store.New(dbtest.New(t))
	ledger := adapter.NewLedger(st, clock)
	eu := shopadapter.New(shopadapter.Config{Token: shopToken, Name: "shop-eu", BaseURL: euURL, Ledger: ledger, Now: clock})
	us := shopadapter.New(shopadapter.Config{Token: shopToken, Name: "shop-us", BaseURL: usURL, Ledger: ledger, Now: clock})
	ctx := context.Background()

	euLamp, err := eu.Resolve(ctx, jordan, shopadapter.KindOrder, "walnut lamp")
	if err != nil {
		t.Fatal(err)
	}
	usLamp, err := us.Resolve(ctx, jordan, shopadapter.KindOrder, "walnut lamp")
	if err != nil {
		t.Fatal(err)
	}
	if euLamp.ID != usLamp.ID || euLamp.System != "shop-eu" || usLamp.System != "shop-us" {
		t.Fatalf("targets %+v and %+v: want the same seeded id in two systems", euLamp, usLamp)
	}

	// An order created in the EU shop does not exist in the US one.
	var customers demoshop.List[demoshop.Customer]
	b := &testBundle{url: euURL, client: http10s()}
	b.shopCall(t, "GET", "/customers?email="+jordan.CustomerRef, nil, &customers)
	o, err := euShop.CreateOrder(ctx, demoshop.OrderFixture{CustomerID: customers.Data[0].ID, DeliveredAt: daysAgo(2)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eu.Resolve(ctx, jordan, shopadapter.KindOrder, o.ID); err != nil {
		t.Errorf("EU order in the EU shop: %v", err)
	}
	_, err = us.Resolve(ctx, jordan, shopadapter.KindOrder, o.ID)
	wantError(t, err, adapter.CodeNotFound, adapter.Refused)

	// A quote made in one system is refused by the other.
	q, err := eu.DryRun(ctx, jordan, shopadapter.ActionIssueRefund, raw(t, refundLamp))
	if err != nil {
		t.Fatal(err)
	}
	call := adapter.Call{Action: shopadapter.ActionIssueRefund, Args: raw(t, refundLamp), IdempotencyKey: "key-1", Quote: q}
	_, err = us.Execute(ctx, jordan, call)
	wantError(t, err, adapter.CodeStaleTarget, adapter.Refused)

	// The same key in each system is two calls: one refund in each shop.
	euRes, err := eu.Execute(ctx, jordan, call)
	if err != nil {
		t.Fatal(err)
	}
	call.Quote, err = us.DryRun(ctx, jordan, shopadapter.ActionIssueRefund, raw(t, refundLamp))
	if err != nil {
		t.Fatal(err)
	}
	usRes, err := us.Execute(ctx, jordan, call)
	if err != nil {
		t.Fatal(err)
	}
	if euRes.Deduplicated || usRes.Deduplicated || euRes.Reference == usRes.Reference {
		t.Errorf("results %+v and %+v, want two separate refunds", euRes, usRes)
	}
	for _, url := range []string{euURL, usURL} {
		sb := &testBundle{url: url, client: http10s()}
		if diff := cmp.Diff([]string{"refund.created"}, sb.effectKinds(t, "key-1")); diff != "" {
			t.Errorf("%s effects (-want +got):\n%s", url, diff)
		}
	}
}
