package httpadapter_test

import (
	"context"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestNoChangeGuardCannotBeBypassedByAHiddenCharacter: the address an
// order already ships to is refused as no change, and the same address
// with a zero-width space or a right-to-left override in it is refused as
// invalid, naming the field, by both shop adapters: it never becomes a
// quote that reads like the old address.
func TestNoChangeGuardCannotBeBypassedByAHiddenCharacter(t *testing.T) {
	t.Parallel()
	file, shop := connect(t, nil)
	hand := shopadapter.New(shopadapter.Config{Name: "shop", BaseURL: shop.URL, Token: shop.Token(), Now: clock,
		Ledger: adapter.NewLedger(store.New(dbtest.New(t)), clock)})
	p := adapter.Principal{CustomerRef: demoshop.DemoCustomerEmail}
	args := func(line1 string) map[string]any {
		return map[string]any{"order_id": "standing desk mat", "address": map[string]any{"name": "Jordan Lee", "line1": line1,
			"line2": "Suite 210", "city": "San Francisco", "postal_code": "94105", "country": "US"}}
	}
	for _, sys := range []adapter.System{hand, file} {
		_, err := sys.DryRun(context.Background(), p, "change_shipping_address", raw(t, args("500 Market Street")))
		if ae, ok := adapter.AsError(err); !ok || ae.Code != "no_change" {
			t.Fatalf("%s: the current address: %v, want no_change", sys.Name(), err)
		}
		for _, line1 := range []string{"500 Market Street\u200b", "\u202eteertS tekraM 005"} {
			q, err := sys.DryRun(context.Background(), p, "change_shipping_address", raw(t, args(line1)))
			ae, ok := adapter.AsError(err)
			if !ok || ae.Code != adapter.CodeInvalidArguments || ae.Fields["address.line1"] == "" {
				t.Errorf("%s: line1 %q: quote %+v, error %v; want invalid_arguments naming address.line1", sys.Name(), line1, q.Lines, err)
			}
		}
	}
}
