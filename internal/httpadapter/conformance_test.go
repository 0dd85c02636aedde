package httpadapter_test

import (
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/demoshop/shoptest"
	"countersign/internal/httpadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testNow is every clock in these tests: the shop's, the ledger's and the
// adapter's (the shop is seeded relative to it).
var testNow = time.Date(2026, 4, 12, 15, 4, 5, 0, time.UTC)

func clock() time.Time { return testNow }

// connect loads the shop's description file against a fresh shop.
func connect(t *testing.T, tr http.RoundTripper) (*httpadapter.Adapter, *shoptest.Shop) {
	t.Helper()
	return connectFile(t, "testdata/shop-http.json", tr)
}

// connectFile loads a description file of the demo shop against a fresh
// shop.
func connectFile(t *testing.T, file string, tr http.RoundTripper) (*httpadapter.Adapter, *shoptest.Shop) {
	t.Helper()
	shop := shoptest.Start(t, testNow)
	ledger := adapter.NewLedger(store.New(dbtest.New(t)), clock)
	if tr == nil {
		tr = http.DefaultTransport
	}
	a, err := httpadapter.LoadFile(file, httpadapter.Config{Ledger: ledger, Now: clock,
		HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		Getenv: func(name string) string {
			switch name {
			case "SHOP_URL":
				return shop.URL
			case "SHOP_TOKEN":
				return shop.Token()
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	return a, shop
}

// TestConformance runs the adapter conformance suite over every
// description file of testdata (fixtures/ holds the live command's
// fixtures and openapi/ the systems' own OpenAPI documents that `systems
// draft` starts from, not descriptions): the files at the top against the demo shop,
// the examples against the system each describes. A file added without a
// backend here fails the test.
func TestConformance(t *testing.T) {
	t.Parallel()
	examples := map[string]func() (adaptertest.Setup, adaptertest.Fixture){
		"example/pocketbase.json": func() (adaptertest.Setup, adaptertest.Fixture) {
			return pbBackend("testdata/example/pocketbase.json"), pbFixture()
		},
		"example/plans.json":        func() (adaptertest.Setup, adaptertest.Fixture) { return plansBackend, plansFixture() },
		"example/graphql-shop.json": func() (adaptertest.Setup, adaptertest.Fixture) { return gqlBackend, gqlFixture() },
		"example/payments.json": func() (adaptertest.Setup, adaptertest.Fixture) {
			return paymentsBackend, paymentsFixture()
		},
	}
	var files []string
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "fixtures" || d.Name() == "openapi") {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) < 3 {
		t.Fatalf("description files in testdata: %v, %v", files, err)
	}
	for _, file := range files {
		name, _ := filepath.Rel("testdata", file)
		name = filepath.ToSlash(name)
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(name, "/") {
				adaptertest.Run(t, func(t *testing.T, tr http.RoundTripper) adaptertest.Backend {
					a, shop := connectFile(t, file, tr)
					return adaptertest.Backend{System: a, Effects: shop.Effects,
						Fault: func(t *testing.T, f adaptertest.Fault) { shop.Fault(t, "POST /refunds", f) }}
				}, fixture())
				return
			}
			backend, ok := examples[name]
			if !ok {
				t.Fatalf("testdata/%s has no conformance backend: add one to TestConformance", name)
			}
			setup, fix := backend()
			adaptertest.Run(t, setup, fix)
		})
	}
}

// fixture is the shop's conformance fixture with this file's read tools.
func fixture() adaptertest.Fixture {
	fix := shoptest.Fixture()
	fix.Reads = []adaptertest.Read{
		{Tool: "get_order", Args: map[string]any{"order_id": "walnut lamp"}},
		{Tool: "list_orders", Args: map[string]any{}},
		{Tool: "list_products", Args: map[string]any{}},
	}
	// The file knows an invoice by its number, status and amount, not by
	// its plan as the shop adapter does.
	for i, v := range fix.Every {
		if v.Action == "resend_receipt" {
			fix.Every[i].Args = map[string]any{"invoice_id": "paid $12.00"}
			fix.Every[i].Other = map[string][]any{"invoice_id": {"paid $49.00"}}
		}
	}
	return fix
}
