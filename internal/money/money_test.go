package money

import "testing"

func TestFormat(t *testing.T) {
	cases := []struct {
		cents    int64
		currency string
		want     string
	}{
		{4210, "", "$42.10"},
		{4210, "USD", "$42.10"},
		{5, "usd", "$0.05"},
		{-1260, "usd", "−$12.60"},
		{4210, "eur", "€42.10"},
		{4210, "gbp", "£42.10"},
		{4210, "chf", "42.10 CHF"},
		{0, "", "$0.00"},
		{1993410, "", "$19,934.10"},
		{123456789, "eur", "€1,234,567.89"},
		{-100000, "usd", "−$1,000.00"},
		{99999, "", "$999.99"},
		// Yen have no minor units, dinars three.
		{4210, "jpy", "4,210 JPY"},
		{-1993410, "JPY", "−1,993,410 JPY"},
		{1234, "kwd", "1.234 KWD"},
		{1993410, "BHD", "1,993.410 BHD"},
		{5, "KWD", "0.005 KWD"},
	}
	for _, tc := range cases {
		if got := Format(tc.cents, tc.currency); got != tc.want {
			t.Errorf("Format(%d, %q) = %q, want %q", tc.cents, tc.currency, got, tc.want)
		}
	}
	if got := Dollars(4210); got != "42.10" {
		t.Errorf("Dollars(4210) = %q", got)
	}
	for _, tc := range []struct {
		minor              int64
		currency, major, e string
	}{{4210, "usd", "42.10", "34.50"}, {4210, "JPY", "4210", "3450"}, {1234, "KWD", "1.234", "34.500"}, {-5, "", "-0.05", "34.50"}} {
		if got := Major(tc.minor, tc.currency); got != tc.major {
			t.Errorf("Major(%d, %q) = %q, want %q", tc.minor, tc.currency, got, tc.major)
		}
		if got := Example(tc.currency); got != tc.e {
			t.Errorf("Example(%q) = %q, want %q", tc.currency, got, tc.e)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1234: "1,234", 19934: "19,934",
		1234567: "1,234,567", -12000: "−12,000", -9223372036854775808: "−9,223,372,036,854,775,808"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
