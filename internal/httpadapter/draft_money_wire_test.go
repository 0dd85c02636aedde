package httpadapter_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestADraftedDecimalAmountIsSentInWholeUnits: the credit note drafted
// from the invoicing document, its principal and owner written as a
// person would, takes 1250 minor units and sends the system "12.50" with
// the currency; its invoice carries no business key until a person
// confirms the proposed identity, and then the invoice's external_id.
func TestADraftedDecimalAmountIsSentInWholeUnits(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/customers":
			_, _ = io.WriteString(w, `{"data": [{"id": "cus_1", "email": "ada@example.com"}]}`)
		case r.Method == http.MethodGet:
			_, _ = io.WriteString(w, `{"id": "inv_1", "number": "F-7", "external_id": "1042", "customer_id": "cus_1", "total": "40.00", "currency_code": "EUR", "status": "open"}`)
		default:
			var body map[string]any
			_ = json.NewDecoder(r.Body).Decode(&body)
			mu.Lock()
			bodies = append(bodies, body)
			mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id": "cn_1"}`)
		}
	}))
	defer srv.Close()

	_, file := draftInvoicing(t, "createCreditNote")
	file["base_url"] = srv.URL
	file["principal"] = map[string]any{"path": "/customers?email={principal}", "items": "/data", "match": "account.email == principal"}
	invoice := file["objects"].(map[string]any)["invoice"].(map[string]any)
	invoice["owner"] = "object.customer_id == account.id"
	args := json.RawMessage(`{"invoice_id": "inv_1", "amount_cents": 1250, "currency_code": "EUR", "memo": "damaged"}`)
	load := func() *httpadapter.Adapter {
		raw, err := json.Marshal(file)
		if err != nil {
			t.Fatal(err)
		}
		a, err := httpadapter.Load("invoicing.json", raw, httpadapter.Config{Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock), Now: clock,
			Getenv: func(k string) string { return "set-" + k }})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	q, err := load().DryRun(context.Background(), ada, "create_credit_note", args)
	if err != nil {
		t.Fatal(err)
	}
	if q.Target.BusinessKey != nil {
		t.Errorf("the unconfirmed identity gave the invoice the business key %+v, want none", q.Target.BusinessKey)
	}
	if q.AmountCents == nil || *q.AmountCents != 1250 || q.Currency != "EUR" {
		t.Errorf("the quote's amount %v %q, want 1250 EUR", q.AmountCents, q.Currency)
	}

	invoice["identity"].(map[string]any)["value"] = "object.external_id" // a person confirms it
	a := load()
	if q, err = a.DryRun(context.Background(), ada, "create_credit_note", args); err != nil {
		t.Fatal(err)
	}
	if k := q.Target.BusinessKey; k == nil || k.Name != "external_id" || k.Value != "1042" {
		t.Errorf("the confirmed identity gave the business key %+v, want external_id 1042", k)
	}
	if _, err := a.Execute(context.Background(), ada, adapter.Call{Action: "create_credit_note", Args: args, IdempotencyKey: "k-1", Quote: q}); err != nil {
		t.Logf("execute: %v (the read-back is a TODO)", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []map[string]any{{"amount": "12.50", "currency_code": "EUR", "memo": "damaged"}}
	if diff := cmp.Diff(want, bodies); diff != "" {
		t.Errorf("the bodies the system read (-want +got):\n%s", diff)
	}
}
