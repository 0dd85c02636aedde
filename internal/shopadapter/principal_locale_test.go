package shopadapter_test

import (
	"context"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

// TestContactSaysTheCustomersLanguage: the shop's customer record keeps
// the customer's language, and Contact returns it in its canonical form;
// a record without one, or with a value that is no language tag, gives
// none (the customer's codes still go).
func TestContactSaysTheCustomersLanguage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, tc := range []struct{ record, want string }{{"ar", "ar"}, {"de-at", "de-AT"}, {"", ""}, {"?!", ""}} {
		_, p := b.newCustomer(t, demoshop.CustomerFixture{Locale: tc.record})
		c, err := b.adapter.Contact(ctx, p)
		if err != nil || c.Locale != tc.want {
			t.Errorf("record locale %q: contact %+v, %v; want locale %q", tc.record, c, err, tc.want)
		}
	}
}

// TestShopBrandTakesALocale: the shop adapter can be given the system's
// default language alone; the demo shop's name and zone fill the rest.
func TestShopBrandTakesALocale(t *testing.T) {
	a := shopadapter.New(shopadapter.Config{Brand: adapter.Brand{Locale: "fr"}})
	b := adapter.BrandOf(a)
	if b.Locale != "fr" || b.Name != shopadapter.DemoBrand.Name || b.Zone != shopadapter.DemoBrand.Zone {
		t.Errorf("brand %+v, want %s in %s writing fr by default", b, shopadapter.DemoBrand.Name, shopadapter.DemoBrand.Zone)
	}
	if b := adapter.BrandOf(shopadapter.New(shopadapter.Config{})); b.Locale != "" || b.Name != shopadapter.DemoBrand.Name {
		t.Errorf("the demo brand %+v, want no default language", b)
	}
}
