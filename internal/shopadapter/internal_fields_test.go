package shopadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

// internalFields are the shop's fields a customer must never see.
var internalFields = []string{
	"risk_score", "fraud_flag", "internal_notes", "margin_cents", "cost_cents", "supplier_notes", "case_notes",
	"processor_customer_id", "processor_subscription_id", "processor_invoice_id", "processor_refund_id",
	"warehouse", "reserved", "decline_code",
}

// secrets collects the values of internal fields from the shop's own
// answers: every string, and the numbers given here as unmistakable.
type secrets struct {
	strings []string
	numbers map[int64]bool
}

func (s *secrets) collect(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			for _, f := range internalFields {
				if k == f {
					if str, ok := x.(string); ok && str != "" {
						s.strings = append(s.strings, str)
					}
				}
			}
			s.collect(x)
		}
	case []any:
		for _, x := range v {
			s.collect(x)
		}
	}
}

func (b *testBundle) collectSecrets(t *testing.T, s *secrets, paths ...string) {
	t.Helper()
	for _, path := range paths {
		var v any
		b.shopCall(t, "GET", path, nil, &v)
		s.collect(v)
	}
}

// check fails when out, as JSON, names an internal field or holds one of
// its values.
func (s *secrets) check(t *testing.T, what string, out any) {
	t.Helper()
	raw, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for _, f := range internalFields {
		if strings.Contains(text, `"`+f+`"`) {
			t.Errorf("%s names the internal field %s: %s", what, f, text)
		}
	}
	for _, v := range s.strings {
		if strings.Contains(text, v) {
			t.Errorf("%s holds the internal value %q: %s", what, v, text)
		}
	}
	for n := range s.numbers {
		for _, form := range []string{fmt.Sprint(n), fmt.Sprintf("%d.%02d", n/100, n%100)} {
			if strings.Contains(text, form) {
				t.Errorf("%s holds the internal number %s: %s", what, form, text)
			}
		}
	}
}

type readCall struct {
	tool string
	args map[string]any
}

type actionCall struct {
	action string
	args   map[string]any
}

// TestInternalFieldsNeverLeave runs every read tool and dry-runs every
// action against seeded customers and a customer whose internal fields
// hold unmistakable values, and looks for each internal field's name and
// value in the JSON of every answer, quote and refusal.
func TestInternalFieldsNeverLeave(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	c, p := b.newCustomer(t, demoshop.CustomerFixture{Sites: []string{"leak.example", "leak.shop"}, RiskScore: 97, FraudFlag: true,
		InternalNotes: "SECRET-CUSTOMER-NOTE"})
	prod, err := b.shop.CreateProduct(ctx, demoshop.ProductFixture{SKU: "LEAK-1", Name: "Leak lamp", PriceCents: 987654,
		CostCents: 123457, Stock: 5, Reserved: 1, Warehouse: "SECRET-WAREHOUSE", SupplierNotes: "SECRET-SUPPLIER-NOTE", Description: "A lamp."})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []demoshop.SubscriptionFixture{
		{CustomerID: c.ID, Site: "leak.example", Plan: "Pro", MarginCents: 777001, InternalNotes: "SECRET-SUB-NOTE", BalanceCents: 500},
		{CustomerID: c.ID, Site: "leak.shop", Plan: "Starter", Status: demoshop.SubscriptionCancelled, CancelAtPeriodEnd: true,
			MarginCents: 777003, InternalNotes: "SECRET-CANCELLED-NOTE"},
	} {
		if _, err := b.shop.CreateSubscription(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	delivered := b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) {
		f.Items = []demoshop.ItemFixture{{ProductID: prod.ID, Quantity: 1}}
		f.DeliveredAt, f.MarginCents, f.RiskScore, f.FraudFlag = daysAgo(3), 777002, 96, true
		f.InternalNotes, f.CaseNotes, f.Damaged = "SECRET-ORDER-NOTE", "SECRET-CASE-NOTE", true
	})
	pending := b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) {
		f.MarginCents, f.InternalNotes = 777004, "SECRET-PENDING-NOTE"
	})
	if _, err := b.shop.CreateRefund(ctx, demoshop.RefundFixture{OrderID: delivered.ID, AmountCents: 100}); err != nil {
		t.Fatal(err)
	}
	s := &secrets{numbers: map[int64]bool{777001: true, 777002: true, 777003: true, 777004: true, 123457: true, 987654 - 123457: true}}
	seeded := []adapter.Principal{jordan, sam, hannah, marcus}
	for _, who := range append(seeded, p) {
		id := b.customerID(t, who)
		b.collectSecrets(t, s, "/customers/"+id, "/customers/"+id+"/subscriptions", "/customers/"+id+"/orders",
			"/invoices?limit=100&customer_id="+url.QueryEscape(id))
		var orders demoshop.List[demoshop.Order]
		b.shopCall(t, "GET", "/customers/"+id+"/orders", nil, &orders)
		for _, o := range orders.Data {
			b.collectSecrets(t, s, "/refunds?order_id="+o.ID)
		}
	}
	b.collectSecrets(t, s, "/products?limit=100", "/inventory/"+prod.ID)
	if len(s.strings) < 20 {
		t.Fatalf("only %d internal values collected; the test would prove little", len(s.strings))
	}

	newAddress := map[string]any{"name": "N", "line1": "9 Road", "city": "Bonn", "postal_code": "53111", "country": "DE"}
	worlds := []struct {
		principal adapter.Principal
		reads     []readCall
		actions   []actionCall
	}{
		{p, []readCall{
			{"get_order", map[string]any{"order_id": delivered.ID}},
			{"get_order", map[string]any{"order_id": pending.ID}},
			{"list_orders", nil},
			{"list_subscriptions", nil},
			{"get_invoice", map[string]any{"invoice_id": "paid Pro"}},
			{"get_product", map[string]any{"product_id": prod.ID}},
			{"check_inventory", map[string]any{"product_ids": prod.ID}},
		}, []actionCall{
			{shopadapter.ActionCancelSubscription, map[string]any{"subscription_id": "Pro", "reason_code": "other", "effective": "immediately"}},
			{shopadapter.ActionCancelSubscription, map[string]any{"subscription_id": "Pro", "reason_code": "other", "effective": "end_of_period"}},
			{shopadapter.ActionReinstateSubscription, map[string]any{"subscription_id": "Starter"}},
			{shopadapter.ActionIssueRefund, map[string]any{"order_id": delivered.ID, "amount_cents": 100, "reason_code": "damaged"}},
			{shopadapter.ActionResendReceipt, map[string]any{"invoice_id": "paid Pro"}},
			{shopadapter.ActionUpdateProductDesc, map[string]any{"product_id": prod.ID, "description": "A better lamp."}},
			{shopadapter.ActionChangeShippingAddress, map[string]any{"order_id": pending.ID, "address": newAddress}},
			{shopadapter.ActionIssueRefund, map[string]any{"order_id": "order", "amount_cents": 100, "reason_code": "damaged"}}, // ambiguous
		}},
		{jordan, []readCall{
			{"get_order", map[string]any{"order_id": "walnut lamp"}},
			{"list_orders", map[string]any{"status": "delivered"}},
			{"list_subscriptions", nil},
			{"get_invoice", map[string]any{"invoice_id": "paid Pro"}},
			{"get_product", map[string]any{"product_id": "LAMP-WAL-01"}},
			{"get_product", map[string]any{"product_id": "SKIL-CI-26"}},
		}, []actionCall{
			{shopadapter.ActionCancelSubscription, cancelPro},
			{shopadapter.ActionIssueRefund, refundLamp},
			{shopadapter.ActionResendReceipt, map[string]any{"invoice_id": "paid Pro"}},
			{shopadapter.ActionUpdateProductDesc, map[string]any{"product_id": "LAMP-WAL-01", "description": "Walnut."}},
			{shopadapter.ActionChangeShippingAddress, map[string]any{"order_id": "standing desk mat", "address": newAddress}},
		}},
		{sam, []readCall{{"get_order", map[string]any{"order_id": "headphones"}}, {"list_orders", nil}},
			[]actionCall{{shopadapter.ActionIssueRefund, map[string]any{"order_id": "headphones", "amount_cents": 100, "reason_code": "changed_mind"}}}},
		{hannah, []readCall{{"list_subscriptions", nil}, {"get_order", map[string]any{"order_id": "pour-over"}}},
			[]actionCall{
				{shopadapter.ActionReinstateSubscription, map[string]any{"subscription_id": "Pro"}},
				{shopadapter.ActionIssueRefund, map[string]any{"order_id": "pour-over", "amount_cents": 100, "reason_code": "damaged"}}, // refused: day 45
			}},
		{marcus, []readCall{{"list_subscriptions", nil}},
			[]actionCall{{shopadapter.ActionCancelSubscription, map[string]any{"subscription_id": "Business", "reason_code": "other", "effective": "immediately"}}}}, // declined
	}
	readSeen, actionSeen := map[string]bool{}, map[string]bool{}
	for _, w := range worlds {
		for _, rc := range w.reads {
			res, err := b.adapter.Read(ctx, w.principal, rc.tool, raw(t, rc.args))
			if err != nil {
				t.Errorf("%s %s: %v", w.principal.CustomerRef, rc.tool, err)
				continue
			}
			readSeen[rc.tool] = true
			s.check(t, rc.tool, res)
		}
		for _, ac := range w.actions {
			q, err := b.dryRun(t, w.principal, ac.action, ac.args)
			if err != nil {
				s.check(t, ac.action+" refusal", err)
				continue
			}
			actionSeen[ac.action] = true
			s.check(t, ac.action+" quote", q)
		}
	}
	for _, spec := range b.adapter.ReadTools() {
		if !readSeen[spec.Name] {
			t.Errorf("read tool %s was not checked", spec.Name)
		}
	}
	for _, spec := range b.adapter.Actions() {
		if !actionSeen[spec.Name] {
			t.Errorf("the quote of %s was not checked", spec.Name)
		}
	}
}
