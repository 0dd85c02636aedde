package httpadapter

import (
	"testing"
)

// TestAmountsInMajorUnitsUseTheCurrencysMinorUnits: an amount a system
// records in whole units is read into the currency's own minor units, not
// always into cents: 4210 yen stay 4210, 1.234 dinars are 1234 fils; a
// fraction finer than the currency has is refused, never rounded away.
func TestAmountsInMajorUnitsUseTheCurrencysMinorUnits(t *testing.T) {
	for _, tc := range []struct {
		v        any
		currency string
		want     int64
	}{
		{"12.50", "USD", 1250}, {12.5, "", 1250}, {int64(12), "eur", 1200},
		{int64(4210), "JPY", 4210}, {"4210", "jpy", 4210}, {4210.0, "JPY", 4210},
		{"1.234", "KWD", 1234}, {int64(2), "BHD", 2000}, {0.1 + 0.2, "USD", 30},
	} {
		got, err := toCents(tc.v, true, tc.currency)
		if err != nil || got != tc.want {
			t.Errorf("toCents(%v, major, %q) = %d, %v; want %d", tc.v, tc.currency, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		v        any
		currency string
	}{{"42.5", "JPY"}, {12.345, "USD"}, {"1.2345", "KWD"}} {
		if got, err := toCents(tc.v, true, tc.currency); err == nil {
			t.Errorf("toCents(%v, major, %q) = %d, want an error: finer than the currency's minor unit", tc.v, tc.currency, got)
		}
	}
	if got, err := toCents(int64(4210), false, "JPY"); err != nil || got != 4210 {
		t.Errorf("minor units are read as they are: %d, %v", got, err)
	}
}
