package controlplane

import (
	"testing"

	"countersign/internal/adapter"
)

// TestSummaryReadsAmountsInTheQuotesCurrency: a summary's amount is read
// in the minor units of the quote's currency, so "¥4,210" agrees with a
// quote of 4,210 yen and "$42.10" (the same digits as cents) does not, nor
// does 42.10 for a quote of 4.210 dinars.
func TestSummaryReadsAmountsInTheQuotesCurrency(t *testing.T) {
	for _, tc := range []struct {
		summary  string
		amount   int64
		currency string
		disagree bool
	}{
		{"Refund $42.10 for the lamp", 4210, "usd", false},
		{"Refund $42.10 for the lamp", 4210, "", false},
		{"Refund €42.10", 4210, "EUR", false},
		{"Refund ¥4,210 for the lamp", 4210, "JPY", false},
		{"Refund $42.10 for the lamp", 4210, "JPY", true},
		{"Refund ¥42.10", 4210, "JPY", true},
		{"Refund $42.10", 4210, "KWD", true},
		{"Refund 4.210 dinars, $4.210", 4210, "KWD", false},
		{"Refund $42.1", 4210, "usd", false},
	} {
		amount := tc.amount
		got, why := summaryDisagrees(tc.summary, adapter.Quote{AmountCents: &amount, Currency: tc.currency})
		if got != tc.disagree {
			t.Errorf("%q for %d %s: disagrees %t (%s), want %t", tc.summary, tc.amount, tc.currency, got, why, tc.disagree)
		}
	}
}
