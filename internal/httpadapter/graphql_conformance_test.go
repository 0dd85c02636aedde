package httpadapter_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/adapter/conformance"
	"countersign/internal/gqlshop"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

const gqlFile = "testdata/example/graphql-shop.json"

// startGQLShop serves a fresh GraphQL shop.
func startGQLShop(t *testing.T) (*gqlshop.Shop, *httptest.Server) {
	t.Helper()
	shop := gqlshop.New("gql-token", clock)
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	return shop, srv
}

// loadGQL loads a GraphQL description (raw, as file name) against srv,
// through tr.
func loadGQL(t *testing.T, name string, raw []byte, srv *httptest.Server, tr http.RoundTripper) *httpadapter.Adapter {
	t.Helper()
	if tr == nil {
		tr = http.DefaultTransport
	}
	a, err := httpadapter.Load(name, raw, httpadapter.Config{Now: clock,
		Ledger:     adapter.NewLedger(store.New(dbtest.New(t)), clock),
		HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		Getenv: func(name string) string {
			switch name {
			case "GQLSHOP_URL":
				return srv.URL
			case "GQLSHOP_TOKEN":
				return "gql-token"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// connectGQL connects the example GraphQL file to a fresh GraphQL shop.
func connectGQL(t *testing.T, tr http.RoundTripper) (*httpadapter.Adapter, *gqlshop.Shop) {
	t.Helper()
	raw, err := os.ReadFile(gqlFile)
	if err != nil {
		t.Fatal(err)
	}
	shop, srv := startGQLShop(t)
	return loadGQL(t, "graphql-shop.json", raw, srv, tr), shop
}

// gqlBackend is the example GraphQL file over a fresh GraphQL shop, for
// the conformance suite: the shop plays the faults on its next mutation.
func gqlBackend(t *testing.T, tr http.RoundTripper) adaptertest.Backend {
	a, shop := connectGQL(t, tr)
	return adaptertest.Backend{System: a,
		Effects: func(_ *testing.T, key string) int { return shop.Refunds(key) },
		Fault:   func(_ *testing.T, f adaptertest.Fault) { shop.Fault(gqlshop.Fault(f)) }}
}

// gqlFixture is the conformance fixture of the GraphQL shop's seed, the
// one `countersign conformance` is run with, except that its refusal is
// GraphQL's usual one: errors[] without data, answered 200 (the file's is
// GraphQL over HTTP's 400, as a fixture file's refusal must be a 4xx).
func gqlFixture() adaptertest.Fixture {
	fix, _, err := conformance.LoadFixture("testdata/fixtures/graphql-shop.json")
	if err != nil {
		panic(err)
	}
	fix.Refusal.Status = http.StatusOK
	return fix
}

// TestGraphQLConformanceThroughTheFaultProxy runs the whole suite as
// `countersign conformance` does, against the GraphQL shop through the
// suite's fault proxy (conformance.RunLive): the proxy picks the mutation
// out of the POSTs by its operation, so every check passes with no
// fault_route.
func TestGraphQLConformanceThroughTheFaultProxy(t *testing.T) {
	t.Parallel()
	shop, srv := startGQLShop(t)
	raw, err := os.ReadFile(gqlFile)
	if err != nil {
		t.Fatal(err)
	}
	fix := gqlFixture()
	results, err := conformance.RunLive(t.Context(), func(tr http.RoundTripper) (conformance.LiveBackend, error) {
		return conformance.LiveBackend{System: loadGQL(t, "graphql-shop.json", raw, srv, tr),
			Effects: func(_ context.Context, key string) (int, error) { return shop.Refunds(key), nil }}, nil
	}, fix, conformance.LiveOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.Passed() {
			t.Errorf("%s: %v", r.Check, r.Problems)
		}
	}
	if len(results) != len(conformance.Checks()) {
		t.Errorf("%d of %d checks ran", len(results), len(conformance.Checks()))
	}
}
