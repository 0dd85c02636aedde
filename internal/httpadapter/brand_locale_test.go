package httpadapter_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/httpadapter"
	"countersign/internal/locale"
)

// withBrandLocale is the shop's file with customer_brand.locale set to loc.
func withBrandLocale(t *testing.T, loc string) []byte {
	t.Helper()
	old := []byte(`"time_zone": "America/Los_Angeles"}`)
	raw := readShopFile(t)
	if !bytes.Contains(raw, old) {
		t.Fatal("the shop's file has no customer_brand time zone")
	}
	return bytes.Replace(raw, old, []byte(`"time_zone": "America/Los_Angeles", "locale": "`+loc+`"}`), 1)
}

// TestBrandLocaleIsTheSystemsDefault: customer_brand.locale is the
// system's default language (adapter.Brand.Locale), in its canonical
// form; a file without one names none, so the pages' choice ends in
// English as the fallback, not as the system's word.
func TestBrandLocaleIsTheSystemsDefault(t *testing.T) {
	for _, tc := range []struct{ file, want string }{{"fr", "fr"}, {"de-AT", "de-AT"}, {"", ""}} {
		raw := readShopFile(t)
		if tc.file != "" {
			raw = withBrandLocale(t, tc.file)
		}
		a, err := httpadapter.Load("shop-http.json", raw, httpadapter.Config{Getenv: shopEnv})
		if err != nil {
			t.Fatalf("locale %q: %v", tc.file, err)
		}
		if got := adapter.BrandOf(a).Locale; got != tc.want {
			t.Errorf("customer_brand.locale %q: Brand().Locale = %q, want %q", tc.file, got, tc.want)
		}
	}
}

// TestBrandLocaleRefusalNamesTheFieldAndTheLanguages: a default language
// that is not a BCP 47 tag does not load; the error names the field and
// the languages customers' pages ship in.
func TestBrandLocaleRefusalNamesTheFieldAndTheLanguages(t *testing.T) {
	var shipped []string
	for _, tag := range locale.Supported() {
		shipped = append(shipped, tag.String())
	}
	for _, loc := range []string{"zz", "en_GB!", "fr-FR-x"} {
		_, err := httpadapter.Load("shop-http.json", withBrandLocale(t, loc), httpadapter.Config{Getenv: shopEnv})
		if err == nil {
			t.Fatalf("customer_brand.locale %q loaded", loc)
		}
		want := []string{"shop-http.json:4: /customer_brand/locale"}
		if loc != "en_GB!" { // the schema's pattern refuses it first
			want = append(want, strings.Join(shipped, ", "))
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("customer_brand.locale %q: error %q does not say %q", loc, err, w)
			}
		}
	}
}

// TestContactLocaleFromTheCustomerRecord: principal.contact.locale points
// at the customer's language on the account, which Contact returns in its
// canonical form; a value that is no language tag is passed over, never
// an error (the customer's codes still go); a pointer that is not one
// does not load.
func TestContactLocaleFromTheCustomerRecord(t *testing.T) {
	t.Parallel()
	a, shop := connect(t, nil)
	ctx := context.Background()
	for _, tc := range []struct{ record, want string }{{"fr-ca", "fr-CA"}, {"", ""}, {"not a language!", ""}} {
		if err := shop.SetCustomerLocale(ctx, demoshop.DemoCustomerEmail, tc.record); err != nil {
			t.Fatal(err)
		}
		c, err := a.Contact(ctx, adapter.Principal{CustomerRef: demoshop.DemoCustomerEmail})
		if err != nil || c.Locale != tc.want || c.Email != demoshop.DemoCustomerEmail {
			t.Errorf("record locale %q: contact %+v, %v; want locale %q", tc.record, c, err, tc.want)
		}
	}
	raw := bytes.Replace(readShopFile(t), []byte(`"locale": "/locale"`), []byte(`"locale": "locale"`), 1)
	_, err := httpadapter.Load("shop-http.json", raw, httpadapter.Config{Getenv: shopEnv})
	if err == nil || !strings.Contains(err.Error(), "/principal/contact/locale") {
		t.Errorf("a contact locale that is not a JSON Pointer: %v, want a refusal naming /principal/contact/locale", err)
	}
}
