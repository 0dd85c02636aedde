package demoshop_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"countersign/internal/demoshop"
	"countersign/store/dbtest"
)

// TestShopRefusesACallWithoutItsToken: every route, business or control,
// answers 401 to a call without the shop's token or with another one, and
// applies nothing; with the token the same refund goes through.
func TestShopRefusesACallWithoutItsToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	order := b.order(t, nil)
	refund := `{"order_id":"` + order.ID + `","amount_cents":100,"reason":"other"}`
	for _, auth := range []string{"", "Bearer ", "Bearer shop_someone_elses", testToken, "Basic " + testToken} {
		for _, call := range []struct{ method, path, body string }{
			{http.MethodPost, "/refunds", refund},
			{http.MethodGet, "/customers", ""},
			{http.MethodGet, "/orders/" + order.ID, ""},
			{http.MethodPost, "/_faults", `{"route":"POST /refunds","error_rate":1}`},
			{http.MethodGet, "/_ledger", ""},
		} {
			req, _ := http.NewRequest(call.method, b.url+call.path, strings.NewReader(call.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Request-Id", "req-no-token")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := b.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with Authorization %q: %d, want 401 with WWW-Authenticate", call.method, call.path, auth, res.StatusCode)
			}
		}
	}
	if got := b.ledger(t, "?request_id=req-no-token"); len(got) != 0 {
		t.Errorf("calls without the token applied %d effects", len(got))
	}
	if len(b.shop.Faults()) != 0 {
		t.Errorf("a call without the token installed a fault: %+v", b.shop.Faults())
	}
	b.call(t, http.MethodPost, "/refunds", refund, http.StatusOK)
}

// TestTestEndpointsOnlyWithTheFlag: without Options.TestEndpoints the
// fault routes answer 404 even with the token, as in make run, while the
// read-only ledger (which adapters reconcile through) answers; a shop made
// without a token generates one of its own.
func TestTestEndpointsOnlyWithTheFlag(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	shop := demoshop.New(pool, demoshop.Options{})
	if !strings.HasPrefix(shop.Token(), "shop_") || len(shop.Token()) < 40 {
		t.Fatalf("generated token %q", shop.Token())
	}
	srv := httptest.NewServer(shop.Handler())
	t.Cleanup(srv.Close)
	for _, call := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/_faults", http.StatusNotFound}, {http.MethodPost, "/_faults", http.StatusNotFound},
		{http.MethodDelete, "/_faults", http.StatusNotFound}, {http.MethodGet, "/_ledger", http.StatusOK},
	} {
		req, _ := http.NewRequest(call.method, srv.URL+call.path, strings.NewReader(`{"route":"POST /refunds","error_rate":1}`))
		req.Header.Set("Authorization", "Bearer "+shop.Token())
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != call.want {
			t.Errorf("%s %s without test endpoints: %d, want %d", call.method, call.path, res.StatusCode, call.want)
		}
	}
	if len(shop.Faults()) != 0 {
		t.Errorf("a fault was installed: %+v", shop.Faults())
	}
}
