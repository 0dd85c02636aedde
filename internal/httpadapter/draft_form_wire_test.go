package httpadapter_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestADraftedFormWriteSendsBrackets: the refund drafted from the
// Stripe-shaped document, its principal and owner written as a person
// would, fetches its token from the token endpoint and sends its body
// form-encoded, the metadata as metadata[reason] and the list as
// expand[0], as the system's own form parser reads them.
func TestADraftedFormWriteSendsBrackets(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sent []*http.Request
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/oauth/token":
			_, _ = io.WriteString(w, `{"access_token": "tok-1", "token_type": "bearer", "expires_in": 3600}`)
		case r.URL.Path == "/customers":
			_, _ = io.WriteString(w, `{"data": [{"id": "cus_1", "email": "ada@example.com"}]}`)
		case r.Method == http.MethodGet:
			_, _ = io.WriteString(w, `{"id": "ch_1", "object": "charge", "customer": "cus_1", "amount": 2000, "amount_refunded": 0, "currency": "eur", "status": "succeeded", "metadata": {"order_number": "1042"}}`)
		default:
			raw, _ := io.ReadAll(r.Body)
			mu.Lock()
			sent, bodies = append(sent, r), append(bodies, string(raw))
			mu.Unlock()
			_, _ = io.WriteString(w, `{"id": "re_1", "object": "refund", "amount": 500, "charge": "ch_1"}`)
		}
	}))
	defer srv.Close()

	_, file := draftPayments(t, "PostRefunds")
	file["base_url"] = srv.URL
	file["auth"].(map[string]any)["token_url"] = srv.URL + "/oauth/token"
	file["principal"] = map[string]any{"path": "/customers?email={principal}", "items": "/data", "match": "account.email == principal"}
	file["objects"].(map[string]any)["charge"].(map[string]any)["owner"] = "object.customer == account.id"
	raw, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	a, err := httpadapter.Load("payments.json", raw, httpadapter.Config{Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock), Now: clock,
		Getenv: func(k string) string { return "set-" + k }})
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"charge_id": "ch_1", "amount_cents": 500, "reason": "requested_by_customer", "expand": "charge",
		"metadata": {"reason": "damaged", "order_number": "1042"}}`)
	q, err := a.DryRun(context.Background(), ada, "post_refunds", args)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = a.Execute(context.Background(), ada, adapter.Call{Action: "post_refunds", Args: args, IdempotencyKey: "k-1", Quote: q})

	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 {
		t.Fatalf("%d writes sent, want 1", len(sent))
	}
	r := sent[0]
	if got := r.Header.Get("Content-Type"); got != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer tok-1" {
		t.Errorf("Authorization %q, want the token endpoint's", got)
	}
	fields, err := url.ParseQuery(bodies[0])
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{"charge": {"ch_1"}, "amount": {"500"}, "reason": {"requested_by_customer"}, "expand[0]": {"charge"},
		"metadata[reason]": {"damaged"}, "metadata[order_number]": {"1042"}}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("the fields the system read (-want +got):\n%s\nsent %s", diff, bodies[0])
	}
}
