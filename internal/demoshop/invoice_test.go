package demoshop_test

import (
	"context"
	"net/http"
	"testing"

	"countersign/internal/demoshop"
)

func TestVoidInvoice(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{})
	path := "/invoices/" + *sub.UpcomingInvoiceID + "/void"
	resp, err := b.send(t, http.MethodPost, path, nil, "req-void")
	if err != nil || resp.status != http.StatusOK {
		t.Fatalf("void: %v %d %s", err, resp.status, resp.body)
	}
	got := decode[demoshop.Invoice](t, resp)
	if got.Status != demoshop.InvoiceVoid || got.VoidedAt == nil || got.Version != 2 {
		t.Errorf("after void: %+v", got)
	}
	entries := b.ledger(t, "?request_id=req-void")
	if len(entries) != 1 || entries[0].Kind != demoshop.KindInvoiceVoided || entries[0].Object != got.ID {
		t.Errorf("ledger = %+v", entries)
	}
	b.wantError(t, http.MethodPost, path, jsonObject{}, http.StatusConflict, "invoice_already_void")
	after := decode[demoshop.Subscription](t, b.call(t, http.MethodGet, "/subscriptions/"+sub.ID, nil, http.StatusOK))
	if after.UpcomingInvoiceID != nil {
		t.Errorf("subscription still has upcoming invoice %s", *after.UpcomingInvoiceID)
	}
}

func TestVoidRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{})
	paid, err := b.shop.CreateInvoice(context.Background(), demoshop.InvoiceFixture{SubscriptionID: sub.ID})
	if err != nil {
		t.Fatal(err)
	}
	b.wantError(t, http.MethodPost, "/invoices/"+paid.ID+"/void", nil, http.StatusConflict, "invoice_not_voidable")
	b.wantError(t, http.MethodPost, "/invoices/"+*sub.UpcomingInvoiceID+"/void", jsonObject{"expected_version": 7},
		http.StatusConflict, "version_conflict")
	b.wantError(t, http.MethodPost, "/invoices/in_missing/void", nil, http.StatusNotFound, "resource_missing")
	if got := b.ledger(t, ""); len(got) != 0 {
		t.Errorf("refused voids recorded %+v", got)
	}
}

func TestSendReceiptRecordsEveryCall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sub := b.subscription(t, demoshop.SubscriptionFixture{})
	paid := decode[demoshop.List[demoshop.Invoice]](t,
		b.call(t, http.MethodGet, "/invoices?status=paid&subscription_id="+sub.ID, nil, http.StatusOK)).Data[0]
	for range 2 {
		if _, err := b.send(t, http.MethodPost, "/invoices/"+paid.ID+"/send", nil, "req-resend"); err != nil {
			t.Fatal(err)
		}
	}
	got := decode[demoshop.Invoice](t, b.call(t, http.MethodGet, "/invoices/"+paid.ID, nil, http.StatusOK))
	if got.ReceiptsSent != paid.ReceiptsSent+2 || len(got.Receipts) != len(paid.Receipts)+2 || got.Version != paid.Version+2 {
		t.Errorf("after two sends: receipts_sent %d, receipts %d, version %d; before: %d, %d, %d",
			got.ReceiptsSent, len(got.Receipts), got.Version, paid.ReceiptsSent, len(paid.Receipts), paid.Version)
	}
	if n := len(b.ledger(t, "?request_id=req-resend&kind="+demoshop.KindReceiptSent)); n != 2 {
		t.Errorf("ledger rows = %d, want 2", n)
	}
	b.wantError(t, http.MethodPost, "/invoices/"+*sub.UpcomingInvoiceID+"/send", nil, http.StatusConflict, "invoice_not_paid")
}
