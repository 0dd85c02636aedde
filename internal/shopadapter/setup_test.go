package shopadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testNow is every clock in these tests: the shops', the ledger's and the
// adapter's.
var testNow = time.Date(2026, 4, 12, 15, 4, 5, 0, time.UTC)

func clock() time.Time { return testNow }

func daysAgo(n int) *time.Time {
	t := testNow.AddDate(0, 0, -n)
	return &t
}

// Principals of the seeded customers.
var (
	jordan = adapter.Principal{CustomerRef: demoshop.DemoCustomerEmail}
	maya   = adapter.Principal{CustomerRef: "maya@brightleaf.example"}
	marcus = adapter.Principal{CustomerRef: "marcus.chen@example.com"}
	priya  = adapter.Principal{CustomerRef: "priya@natarajan-design.example"}
	hannah = adapter.Principal{CustomerRef: "hannah.weiss@example.de"}
	noah   = adapter.Principal{CustomerRef: "noah@williams-co.example"}
	sam    = adapter.Principal{CustomerRef: "sam.rivera@example.net"}
	// operator edits the catalogue; products have no owner.
	operator = adapter.Principal{CustomerRef: "ops@shop.example"}
)

type testBundle struct {
	shop    *demoshop.Shop
	url     string
	store   *store.Store
	ledger  *adapter.Ledger
	adapter *shopadapter.Adapter
	client  *http.Client
}

// shopToken is the credential of the tests' shops.
const shopToken = "shop_test_token"

// startShop serves a seeded demo shop from its own database over real HTTP.
func startShop(t *testing.T) (*demoshop.Shop, string) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if err := demoshop.Seed(ctx, pool, testNow); err != nil {
		t.Fatal(err)
	}
	shop := demoshop.New(pool, demoshop.Options{Now: clock, Rand: rand.New(rand.NewPCG(1, 2)), Token: shopToken})
	run, err := demoshop.Start(ctx, shop, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := run.Close(context.Background()); err != nil {
			t.Errorf("close shop: %v", err)
		}
	})
	return shop, run.URL
}

// setup gives the test a seeded shop, a console database for the request
// ledger, and an adapter named "shop" over them.
func setup(t *testing.T) *testBundle {
	t.Helper()
	shop, url := startShop(t)
	st := store.New(dbtest.New(t))
	ledger := adapter.NewLedger(st, clock)
	return &testBundle{
		shop: shop, url: url, store: st, ledger: ledger,
		adapter: shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: url, Token: shopToken, Ledger: ledger, Now: clock}),
		client:  http10s(),
	}
}

// http10s is the client tests use to call a shop directly.
func http10s() *http.Client { return &http.Client{Timeout: 10 * time.Second} }

func raw(t *testing.T, args any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *testBundle) dryRun(t *testing.T, p adapter.Principal, action string, args any) (adapter.Quote, error) {
	t.Helper()
	return b.adapter.DryRun(context.Background(), p, action, raw(t, args))
}

// execute dry-runs an action, which must succeed, and executes it with key
// against that quote.
func (b *testBundle) execute(t *testing.T, p adapter.Principal, action string, args any, key string) (adapter.Call, adapter.Result, error) {
	t.Helper()
	q, err := b.dryRun(t, p, action, args)
	if err != nil {
		t.Fatalf("dry run %s: %v", action, err)
	}
	call := adapter.Call{Action: action, Args: raw(t, args), IdempotencyKey: key, Quote: q}
	res, err := b.adapter.Execute(context.Background(), p, call)
	return call, res, err
}

// mustExecute is execute for calls that must succeed and verify.
func (b *testBundle) mustExecute(t *testing.T, p adapter.Principal, action string, args any, key string) (adapter.Call, adapter.Result) {
	t.Helper()
	call, res, err := b.execute(t, p, action, args, key)
	if err != nil {
		t.Fatalf("execute %s: %v", action, err)
	}
	v, err := b.adapter.Verify(context.Background(), p, call, &res)
	if err != nil || !v.Verified {
		t.Fatalf("verify %s: %+v, %v", action, v, err)
	}
	return call, res
}

// shopCall calls the shop's HTTP API directly, as another client would.
func (b *testBundle) shopCall(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(raw(t, body))
	}
	req, err := http.NewRequestWithContext(context.Background(), method, b.url+path, rd)
	if err == nil {
		req.Header.Set("Authorization", "Bearer "+shopToken)
	}
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}

// effectKinds lists the kinds of the shop's effects recorded under key.
func (b *testBundle) effectKinds(t *testing.T, key string) []string {
	t.Helper()
	var effects []demoshop.LedgerEntry
	b.shopCall(t, http.MethodGet, "/_ledger?request_id="+url.QueryEscape(key), nil, &effects)
	kinds := []string{}
	for _, e := range effects {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

func (b *testBundle) customerID(t *testing.T, p adapter.Principal) string {
	t.Helper()
	var list demoshop.List[demoshop.Customer]
	b.shopCall(t, http.MethodGet, "/customers?email="+url.QueryEscape(p.CustomerRef), nil, &list)
	if len(list.Data) != 1 {
		t.Fatalf("customer %s: %d matches", p.CustomerRef, len(list.Data))
	}
	return list.Data[0].ID
}

func (b *testBundle) subscription(t *testing.T, id string) demoshop.Subscription {
	t.Helper()
	var s demoshop.Subscription
	b.shopCall(t, http.MethodGet, "/subscriptions/"+id, nil, &s)
	return s
}

func (b *testBundle) fault(t *testing.T, rule demoshop.FaultRule) {
	t.Helper()
	if err := b.shop.SetFault(rule); err != nil {
		t.Fatal(err)
	}
}

// newCustomer creates a customer of one site with a unique e-mail.
func (b *testBundle) newCustomer(t *testing.T, f demoshop.CustomerFixture) (demoshop.Customer, adapter.Principal) {
	t.Helper()
	c, err := b.shop.CreateCustomer(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return c, adapter.Principal{CustomerRef: c.Email}
}

// newOrder creates an order of 2 × $42.00 in items plus $12.00 shipping,
// edited by edit.
func (b *testBundle) newOrder(t *testing.T, customerID string, edit func(*demoshop.OrderFixture)) demoshop.Order {
	t.Helper()
	f := demoshop.OrderFixture{
		CustomerID:    customerID,
		Items:         []demoshop.ItemFixture{{Name: "Oak bookend", Quantity: 2, UnitPriceCents: 4200}},
		ShippingCents: 1200,
	}
	if edit != nil {
		edit(&f)
	}
	o, err := b.shop.CreateOrder(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// wantError asserts err is an *adapter.Error with code and outcome.
func wantError(t *testing.T, err error, code string, outcome adapter.Outcome) *adapter.Error {
	t.Helper()
	ae, ok := adapter.AsError(err)
	if !ok {
		t.Fatalf("error %v (%T), want *adapter.Error %s", err, err, code)
	}
	if ae.Code != code || ae.Outcome != outcome {
		t.Fatalf("error %s/%s (%s), want %s/%s", ae.Code, ae.Outcome, ae.Message, code, outcome)
	}
	if ae.Message == "" {
		t.Errorf("error %s has no message", ae.Code)
	}
	return ae
}
