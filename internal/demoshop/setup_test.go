package demoshop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/demoshop"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testToken is the shop's credential in these tests.
const testToken = "shop_test_token"

// testNow is the shop's clock in every test.
var testNow = time.Date(2026, 4, 12, 15, 4, 5, 0, time.UTC)

func daysAgo(n int) *time.Time {
	t := testNow.AddDate(0, 0, -n)
	return &t
}

type testBundle struct {
	pool   *pgxpool.Pool
	shop   *demoshop.Shop
	url    string
	client *http.Client
}

// setup gives the test its own migrated shop database and a shop served over
// real HTTP.
func setup(t *testing.T) *testBundle {
	t.Helper()
	pool := dbtest.NewBare(t)
	if err := demoshop.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	shop := demoshop.New(pool, demoshop.Options{
		Now:           func() time.Time { return testNow },
		Rand:          rand.New(rand.NewPCG(1, 2)),
		Token:         testToken,
		TestEndpoints: true,
	})
	srv := httptest.NewServer(shop.Handler())
	t.Cleanup(srv.Close)
	// No connection reuse: a dropped or reset connection then affects one
	// call only, and the transport never replays a request on a new one.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	return &testBundle{pool: pool, shop: shop, url: srv.URL, client: client}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// send makes one call; body, when not nil, is sent as JSON (a string is
// sent as it is). It returns the
// transport error instead of failing, for the fault tests.
func (b *testBundle) send(t *testing.T, method, path string, body any, requestID string) (response, error) {
	t.Helper()
	var rd io.Reader
	if raw, ok := body.(string); ok {
		rd = strings.NewReader(raw)
	} else if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, err
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}, nil
}

// call is send for calls that must get an answer with the wanted status.
func (b *testBundle) call(t *testing.T, method, path string, body any, wantStatus int) response {
	t.Helper()
	resp, err := b.send(t, method, path, body, "")
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.status != wantStatus {
		t.Fatalf("%s %s: status %d, want %d; body: %s", method, path, resp.status, wantStatus, resp.body)
	}
	return resp
}

func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, r.body, err)
	}
	return v
}

// providerError is the error object of a shop error answer.
type providerError struct {
	Type           string `json:"type"`
	Code           string `json:"code"`
	Message        string `json:"message"`
	Param          string `json:"param"`
	DeclineCode    string `json:"decline_code"`
	CurrentVersion int    `json:"current_version"`
}

// wantError asserts an error answer and returns its error object.
func (b *testBundle) wantError(t *testing.T, method, path string, body any, status int, code string) providerError {
	t.Helper()
	resp := b.call(t, method, path, body, status)
	e := decode[struct {
		Error providerError `json:"error"`
	}](t, resp).Error
	if e.Code != code || e.Type == "" || e.Message == "" {
		t.Fatalf("%s %s: error %+v, want code %q with a type and a message", method, path, e, code)
	}
	return e
}

// ledger reads GET /_ledger with the given query.
func (b *testBundle) ledger(t *testing.T, query string) []demoshop.LedgerEntry {
	t.Helper()
	return decode[[]demoshop.LedgerEntry](t, b.call(t, http.MethodGet, "/_ledger"+query, nil, http.StatusOK))
}

// customer creates a customer with one site.
func (b *testBundle) customer(t *testing.T) demoshop.Customer {
	t.Helper()
	c, err := b.shop.CreateCustomer(context.Background(), demoshop.CustomerFixture{Name: "Ada Byron"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// order creates an order of $40.00 in items plus $5.00 shipping for a new
// customer, with fields set by edit.
func (b *testBundle) order(t *testing.T, edit func(*demoshop.OrderFixture)) demoshop.Order {
	t.Helper()
	f := demoshop.OrderFixture{
		CustomerID:    b.customer(t).ID,
		Items:         []demoshop.ItemFixture{{Name: "Teapot", Quantity: 2, UnitPriceCents: 2000}},
		ShippingCents: 500,
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
