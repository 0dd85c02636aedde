package httpadapter_test

import (
	"bytes"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
)

// TestCustomerBrandLoads: the file's customer_brand names the system to
// its customers, in its zone; a file without one is named by its title in
// UTC; an action on the business's own objects says so.
func TestCustomerBrandLoads(t *testing.T) {
	raw := readShopFile(t)
	a, err := httpadapter.Load("shop-http.json", raw, httpadapter.Config{Getenv: shopEnv})
	if err != nil {
		t.Fatal(err)
	}
	b := adapter.BrandOf(a)
	if b.Name != "Harbour & Pine" || b.Zone.String() != "America/Los_Angeles" || b.LogoURL != "" {
		t.Errorf("brand %+v, want Harbour & Pine in America/Los_Angeles", b)
	}
	for _, s := range a.Actions() {
		if want := s.Name != "update_product_description"; s.ForCustomer() != want {
			t.Errorf("%s: for the customer %v, want %v", s.Name, s.ForCustomer(), want)
		}
	}
	i := bytes.Index(raw, []byte(`  "customer_brand"`))
	j := i + bytes.IndexByte(raw[i:], '\n') + 1
	plain, err := httpadapter.Load("shop-http.json", append(append([]byte{}, raw[:i]...), raw[j:]...), httpadapter.Config{Getenv: shopEnv})
	if err != nil {
		t.Fatal(err)
	}
	if b := adapter.BrandOf(plain); b.Name != "Demo shop (described by a file)" || b.Zone.String() != "UTC" {
		t.Errorf("brand without customer_brand: %+v", b)
	}
}

// TestCustomerBrandErrorsNameTheFieldAndTheFix: a brand customers could
// be misled by, or a zone that is not one, does not load, and the error
// names the field and how to fix it.
func TestCustomerBrandErrorsNameTheFieldAndTheFix(t *testing.T) {
	cases := []struct {
		name, brand string
		want        []string
	}{
		{"a logo over http", `{"name": "Harbour & Pine", "logo_url": "http://cdn.example/logo.png"}`,
			[]string{"/customer_brand/logo_url", "https://"}},
		{"a logo with no host", `{"name": "Harbour & Pine", "logo_url": "https:///logo.png"}`,
			[]string{"/customer_brand/logo_url", "fix: use an https:// address of the logo image"}},
		{"a zone that is not one", `{"name": "Harbour & Pine", "time_zone": "Paris"}`,
			[]string{"/customer_brand/time_zone", `"Paris" is not an IANA time zone name`, "fix: use an IANA time zone name such as \"Europe/Paris\""}},
		{"an invisible character in the name", `{"name": "Harbour\u200b & Pine"}`,
			[]string{"/customer_brand/name", "invisible character U+200B", "fix: write the business's name"}},
		{"no name", `{"time_zone": "Europe/Paris"}`,
			[]string{"/customer_brand", "name"}},
		{"an unknown field", `{"name": "Harbour & Pine", "colour": "red"}`,
			[]string{"/customer_brand", "colour"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw := bytes.Replace(readShopFile(t), []byte(`{"name": "Harbour & Pine", "time_zone": "America/Los_Angeles"}`), []byte(tc.brand), 1)
			_, err := httpadapter.Load("shop-http.json", raw, httpadapter.Config{Getenv: shopEnv})
			if err == nil {
				t.Fatal("the file loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
