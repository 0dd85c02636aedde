package money

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in       string
		currency string
		want     int64
	}{
		{"34.50", "usd", 3450}, {"34.5", "", 3450}, {"34", "", 3400}, {"$34.50", "usd", 3450}, {" 1,234.00 ", "", 123400},
		{"0.05", "", 5}, {".50", "", 50}, {"€12.60", "eur", 1260}, {"42.10 CHF", "chf", 4210},
		// The currency's own minor units: yen have none, dinars three.
		{"4210", "JPY", 4210}, {"¥4,210", "jpy", 4210}, {"1.234", "KWD", 1234}, {"1.5", "BHD", 1500}, {"1", "KWD", 1000},
	} {
		got, err := Parse(tc.in, tc.currency)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q, %q) = %d, %v; want %d", tc.in, tc.currency, got, err, tc.want)
		}
		if back := Dollars(got); tc.in == "34.50" && back != "34.50" {
			t.Errorf("Dollars(Parse(34.50)) = %q", back)
		}
	}
	for _, bad := range []string{"", "abc", "34.505", "-5", "3450 cents", "34.", "1e3", "12.3.4", "99999999999999"} {
		if got, err := Parse(bad, "usd"); !errors.Is(err, ErrAmount) {
			t.Errorf("Parse(%q) = %d, %v; want ErrAmount", bad, got, err)
		}
	}
	// Decimals a currency does not have are refused, not read as cents.
	for _, bad := range []struct{ in, currency string }{{"42.10", "JPY"}, {"42.1", "jpy"}, {"1.2345", "KWD"}} {
		if got, err := Parse(bad.in, bad.currency); !errors.Is(err, ErrAmount) {
			t.Errorf("Parse(%q, %q) = %d, %v; want ErrAmount", bad.in, bad.currency, got, err)
		}
	}
}
