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
	}
	for _, tc := range cases {
		if got := Format(tc.cents, tc.currency); got != tc.want {
			t.Errorf("Format(%d, %q) = %q, want %q", tc.cents, tc.currency, got, tc.want)
		}
	}
	if got := Dollars(4210); got != "42.10" {
		t.Errorf("Dollars(4210) = %q", got)
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
