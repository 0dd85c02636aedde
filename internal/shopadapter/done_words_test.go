package shopadapter_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

// TestDoneWordsAndOrderFactsInTheCustomersLanguage: a quote carries the
// action's done words and the order's reference and items in every
// language of the catalogue (shop.done.*, shop.facts.*), so a customer's
// page never shows "Refunded" or "Order #…" to a French reader; the
// written English ones are the spec's done words.
func TestDoneWordsAndOrderFactsInTheCustomersLanguage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, p := b.newCustomer(t, demoshop.CustomerFixture{})
	o := b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) { f.DeliveredAt = daysAgo(20); f.Currency = "eur" })
	q, err := b.dryRun(t, p, shopadapter.ActionIssueRefund, map[string]any{"order_id": o.ID, "amount_cents": 1000, "reason_code": "changed_mind"})
	if err != nil {
		t.Fatal(err)
	}
	var spec string
	for _, s := range b.adapter.Actions() {
		if s.Name == shopadapter.ActionIssueRefund {
			spec = s.DoneWords
		}
	}
	number := q.Customer.Reference[len("Order "):]
	type facts struct{ Done, Reference, Items string }
	for loc, want := range map[string]facts{
		"en": {Done: spec, Reference: "Order " + number, Items: "Oak bookend × 2"},
		"fr": {Done: "Le remboursement est effectué", Reference: "Commande " + number, Items: "Oak bookend × 2"},
		"ar": {Done: "تم استرداد المبلغ", Reference: "الطلب " + number, Items: "Oak bookend × 2"},
		"de": {Done: "Die Erstattung ist veranlasst", Reference: "Bestellung " + number, Items: "Oak bookend × 2"},
		"es": {Done: "El reembolso se ha realizado", Reference: "Pedido " + number, Items: "Oak bookend × 2"},
	} {
		in := q.In(loc)
		got := facts{Done: in.DoneWords, Reference: in.Customer.Reference}
		if len(in.Customer.Items) > 0 {
			got.Items = in.Customer.Items[0]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", loc, diff)
		}
	}
}
