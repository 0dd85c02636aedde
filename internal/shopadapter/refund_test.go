package shopadapter_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

// TestRefundPolicyBoundaries runs the refund policy's rules at their edges. Every
// order holds 2 × $42.00 in items and $12.00 shipping.
func TestRefundPolicyBoundaries(t *testing.T) {
	t.Parallel()
	delivered := func(days int) func(*demoshop.OrderFixture) {
		return func(f *demoshop.OrderFixture) { f.DeliveredAt = daysAgo(days) }
	}
	// Shipped 26 hours after it was placed (the fixture's rule), n days ago.
	lost := func(days int) func(*demoshop.OrderFixture) {
		return func(f *demoshop.OrderFixture) {
			f.FulfilmentStatus = demoshop.FulfilmentNotReceived
			f.PlacedAt = testNow.AddDate(0, 0, -days).Add(-26 * time.Hour)
		}
	}
	lateOnDay31 := func(f *demoshop.OrderFixture) {
		d := time.Date(2026, 3, 12, 23, 59, 0, 0, time.UTC) // 30 days 15 hours before testNow
		f.DeliveredAt = &d
	}
	cases := []struct {
		name     string
		order    func(*demoshop.OrderFixture)
		refunded int64
		reason   string
		amount   int64
		code     string // "" when the refund is allowed
	}{
		{"damaged, day 30, the whole balance", delivered(30), 0, "damaged", 8400, ""},
		{"damaged, day 30, one cent above", delivered(30), 0, "damaged", 8401, "amount_above_refundable"},
		{"damaged, day 31", delivered(31), 0, "damaged", 100, "outside_refund_window_store_credit"},
		{"damaged, 31 calendar days though under 31×24 hours", lateOnDay31, 0, "damaged", 100, "outside_refund_window_store_credit"},
		{"damaged, day 60", delivered(60), 0, "damaged", 100, "outside_refund_window_store_credit"},
		{"damaged, day 61", delivered(61), 0, "damaged", 100, "outside_refund_window"},
		{"damaged, after an earlier refund", delivered(5), 1000, "damaged", 7400, ""},
		{"damaged, after an earlier refund, one cent above", delivered(5), 1000, "damaged", 7401, "amount_above_refundable"},
		{"changed mind deducts 15%", delivered(10), 0, "changed_mind", 7140, ""},
		{"changed mind, one cent above", delivered(10), 0, "changed_mind", 7141, "amount_above_refundable"},
		{"wrong item includes shipping", delivered(10), 0, "wrong_item", 9600, ""},
		{"wrong item, one cent above", delivered(10), 0, "wrong_item", 9601, "amount_above_refundable"},
		{"duplicate charge is the full charge", delivered(10), 0, "duplicate_charge", 9600, ""},
		{"duplicate charge, one cent above", delivered(10), 0, "duplicate_charge", 9601, "amount_above_refundable"},
		{"not received, shipped 30 days ago, with shipping", lost(30), 0, "not_received", 9600, ""},
		{"not received, one cent above", lost(30), 0, "not_received", 9601, "amount_above_refundable"},
		{"not received, shipped 31 days ago", lost(31), 0, "not_received", 100, "outside_refund_window_store_credit"},
		{"not received, but delivered", delivered(3), 0, "not_received", 100, "reason_does_not_apply"},
		{"damaged, not delivered yet", nil, 0, "damaged", 100, "not_delivered"},
		{"everything refunded already", delivered(3), 9600, "duplicate_charge", 1, "amount_above_refundable"},
	}
	b := setup(t)
	c, p := b.newCustomer(t, demoshop.CustomerFixture{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := b.newOrder(t, c.ID, tc.order)
			if tc.refunded > 0 {
				if _, err := b.shop.CreateRefund(context.Background(), demoshop.RefundFixture{OrderID: o.ID, AmountCents: tc.refunded}); err != nil {
					t.Fatal(err)
				}
			}
			q, err := b.dryRun(t, p, shopadapter.ActionIssueRefund,
				map[string]any{"order_id": o.ID, "amount_cents": tc.amount, "reason_code": tc.reason})
			if tc.code == "" {
				if err != nil {
					t.Fatalf("refund refused: %v", err)
				}
				if q.AmountCents == nil || *q.AmountCents != tc.amount || q.Reversible {
					t.Errorf("quote amount %v reversible %t", q.AmountCents, q.Reversible)
				}
				return
			}
			ae := wantError(t, err, tc.code, adapter.Refused)
			switch tc.code {
			case "outside_refund_window_store_credit":
				if !ae.PolicyRefusal || ae.Retryable || ae.Hint != "Offer store credit through a person; do not call issue_refund again for this order." {
					t.Errorf("store credit refusal: %+v", ae)
				}
			case "outside_refund_window":
				if !ae.PolicyRefusal || ae.Retryable {
					t.Errorf("window refusal: %+v", ae)
				}
			}
		})
	}
}

// TestRefundQuoteShowsTheArithmetic checks the quote lines per reason.
func TestRefundQuoteShowsTheArithmetic(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, p := b.newCustomer(t, demoshop.CustomerFixture{})
	cases := []struct {
		reason string
		amount int64
		lines  []adapter.QuoteLine
	}{
		{"changed_mind", 4210, []adapter.QuoteLine{
			{Label: "Reason", To: "changed mind"},
			{Label: "Items", To: "$84.00"},
			{Label: "Shipping", To: "$12.00"},
			{Label: "You paid", To: "$96.00", Sum: true},
			{Label: "Shipping isn't refunded when you changed your mind", To: "−$12.00"},
			{Label: "Restocking fee (15% of the items)", To: "−$12.60"},
			{Label: "Already refunded", To: "−$5.00"},
			{Label: "Can be refunded when you changed your mind", To: "$66.40", Sum: true},
			{Label: "Not in this refund (can still be refunded later)", To: "−$24.30"},
			{Label: "This refund", To: "$42.10", Emphasis: true, Sum: true},
		}},
		{"damaged", 7900, []adapter.QuoteLine{
			{Label: "Reason", To: "damaged"},
			{Label: "Items", To: "$84.00"},
			{Label: "Shipping", To: "$12.00"},
			{Label: "You paid", To: "$96.00", Sum: true},
			{Label: "Shipping isn't refunded when an item arrived damaged", To: "−$12.00"},
			{Label: "Already refunded", To: "−$5.00"},
			{Label: "This refund", To: "$79.00", Emphasis: true, Sum: true},
		}},
		{"not_received", 100, nil}, // refused: the order was delivered
		{"wrong_item", 9100, []adapter.QuoteLine{
			{Label: "Reason", To: "wrong item"},
			{Label: "Items", To: "$84.00"},
			{Label: "Shipping", To: "$12.00"},
			{Label: "You paid", To: "$96.00", Sum: true},
			{Label: "Already refunded", To: "−$5.00"},
			{Label: "This refund", To: "$91.00", Emphasis: true, Sum: true},
		}},
		{"duplicate_charge", 100, []adapter.QuoteLine{
			{Label: "Reason", To: "duplicate charge"},
			{Label: "You paid", To: "$96.00"},
			{Label: "Already refunded", To: "−$5.00"},
			{Label: "Can be refunded when you were charged twice", To: "$91.00", Sum: true},
			{Label: "Not in this refund (can still be refunded later)", To: "−$90.00"},
			{Label: "This refund", To: "$1.00", Emphasis: true, Sum: true},
		}},
	}
	o := b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) { f.DeliveredAt = daysAgo(20) })
	if _, err := b.shop.CreateRefund(context.Background(), demoshop.RefundFixture{OrderID: o.ID, AmountCents: 500}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		q, err := b.dryRun(t, p, shopadapter.ActionIssueRefund, map[string]any{"order_id": o.ID, "amount_cents": tc.amount, "reason_code": tc.reason})
		if tc.lines == nil {
			wantError(t, err, "reason_does_not_apply", adapter.Refused)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.reason, err)
		}
		if diff := cmp.Diff(tc.lines, q.Lines); diff != "" {
			t.Errorf("%s: lines (-want +got):\n%s", tc.reason, diff)
		}
	}
	q, err := b.dryRun(t, p, shopadapter.ActionIssueRefund, map[string]any{"order_id": o.ID, "amount_cents": 4210, "reason_code": "damaged"})
	if err != nil {
		t.Fatal(err)
	}
	if q.ConfirmLabel != "Refund $42.10" || q.DeclineLabel != "Don't refund" || q.Title != "Refund $42.10 on order "+o.ID+" (Oak bookend)" {
		t.Errorf("labels %q / %q, title %q", q.ConfirmLabel, q.DeclineLabel, q.Title)
	}
	wantConstraints := []string{
		"The order was delivered 20 days ago, on March 23, 2026: inside the 30-day refund window.",
		"Shipping isn't refunded when an item arrived damaged: the parcel arrived, so the carrier's work was done.",
		"A refund never exceeds the refundable balance for its reason, less earlier refunds.",
	}
	if diff := cmp.Diff(wantConstraints, q.Constraints); diff != "" {
		t.Errorf("constraints (-want +got):\n%s", diff)
	}
}

// TestRefundExecuteRefusesWhatTheDryRunWould checks that Execute applies
// the policy itself: a hand-made quote for an order outside the window
// sends nothing.
func TestRefundExecuteRefusesWhatTheDryRunWould(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, p := b.newCustomer(t, demoshop.CustomerFixture{})
	o := b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) { f.DeliveredAt = daysAgo(45) })
	target, err := b.adapter.Resolve(context.Background(), p, shopadapter.KindOrder, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	args := raw(t, map[string]any{"order_id": o.ID, "amount_cents": 100, "reason_code": "damaged"})
	_, err = b.adapter.Execute(context.Background(), p, adapter.Call{Action: shopadapter.ActionIssueRefund, Args: args,
		IdempotencyKey: "key-late", Quote: adapter.Quote{Target: target}})
	wantError(t, err, "outside_refund_window_store_credit", adapter.Refused)
	if got := b.effectKinds(t, "key-late"); len(got) != 0 {
		t.Errorf("effects %v, want none", got)
	}
	var refunds demoshop.List[demoshop.Refund]
	b.shopCall(t, http.MethodGet, "/refunds?order_id="+o.ID, nil, &refunds)
	if len(refunds.Data) != 0 {
		t.Errorf("refunds %v, want none", refunds.Data)
	}
}
