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
