package shopadapter_test

import (
	"net/http"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/demoshop/shoptest"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestConformance runs the adapter conformance suite against the shop
// adapter over a real demo shop.
func TestConformance(t *testing.T) {
	t.Parallel()
	adaptertest.Run(t, func(t *testing.T, tr http.RoundTripper) adaptertest.Backend {
		shop := shoptest.Start(t, testNow)
		ledger := adapter.NewLedger(store.New(dbtest.New(t)), clock)
		sys := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shop.URL, Token: shop.Token(), Ledger: ledger, Now: clock,
			HTTPClient: &http.Client{Transport: tr, Timeout: 10 * time.Second}})
		return adaptertest.Backend{System: sys, Effects: shop.Effects,
			Fault: func(t *testing.T, f adaptertest.Fault) { shop.Fault(t, "POST /refunds", f) }}
	}, shoptest.Fixture())
}
