package demoshop_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/demoshop"
	"countersign/store/dbtest"
)

func getJSON[T any](t *testing.T, url string) T {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", url, resp.StatusCode)
	}
	var v T
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func startShop(t *testing.T, pool *pgxpool.Pool) *demoshop.Running {
	t.Helper()
	ctx := context.Background()
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	run, err := demoshop.Start(ctx, demoshop.New(pool, demoshop.Options{Token: testToken}), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close(context.Background()) })
	if !strings.HasPrefix(run.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %q", run.URL)
	}
	return run
}

// A new shop over the same database, after a second Migrate and Seed, sees
// what the old one did.
func TestRestartKeepsData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := dbtest.NewBareURL(t)
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	first := startShop(t, pool)
	if err := demoshop.Seed(ctx, pool, time.Now()); err != nil {
		t.Fatal(err)
	}
	demo := getJSON[demoshop.List[demoshop.Customer]](t, first.URL+"/customers?email="+demoshop.DemoCustomerEmail).Data[0]
	order := getJSON[demoshop.List[demoshop.Order]](t, first.URL+"/customers/"+demo.ID+"/orders").Data[0]
	req, _ := http.NewRequest(http.MethodPost, first.URL+"/refunds",
		strings.NewReader(`{"order_id":"`+order.ID+`","amount_cents":100,"reason":"other"}`))
	req.Header.Set("X-Request-Id", "req-before-restart")
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("refund: status %d", resp.StatusCode)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	pool.Close()

	pool2, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool2.Close()
	if err := demoshop.Seed(ctx, pool2, time.Now()); err != nil {
		t.Fatal(err)
	}
	second := startShop(t, pool2)
	refunds := getJSON[demoshop.List[demoshop.Refund]](t, second.URL+"/refunds?order_id="+order.ID)
	if len(refunds.Data) != 1 || refunds.Data[0].AmountCents != 100 {
		t.Errorf("refunds after restart = %+v, want the one made before", refunds.Data)
	}
	if got := getJSON[[]demoshop.LedgerEntry](t, second.URL+"/_ledger?request_id=req-before-restart"); len(got) != 1 {
		t.Errorf("ledger after restart = %+v, want one entry", got)
	}
	again := getJSON[demoshop.List[demoshop.Customer]](t, second.URL+"/customers?email="+demoshop.DemoCustomerEmail).Data
	if len(again) != 1 || again[0].ID != demo.ID {
		t.Errorf("demo customer after restart and a second seed = %+v", again)
	}
}

func TestStartRefusesATakenAddress(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewBare(t)
	run := startShop(t, pool)
	addr := strings.TrimPrefix(run.URL, "http://")
	if _, err := demoshop.Start(context.Background(), demoshop.New(pool, demoshop.Options{}), addr); err == nil {
		t.Errorf("second Start on %s succeeded", addr)
	}
}
