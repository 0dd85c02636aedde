// Package money formats amounts of money for people, one way everywhere:
// quotes, the customer's page, the agents' cards, policies and metrics.
package money

import (
	"fmt"
	"strconv"
	"strings"
)

// Format writes cents in a currency the way a receipt does: "$42.10",
// "$19,934.10", "€42.10", "£42.10", "42.10 CHF"; an empty currency is US
// dollars. A negative amount takes a typographic minus: "−$12.60".
func Format(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "−", -cents
	}
	amount := Count(cents/100) + fmt.Sprintf(".%02d", cents%100)
	switch strings.ToLower(currency) {
	case "", "usd":
		return sign + "$" + amount
	case "eur":
		return sign + "€" + amount
	case "gbp":
		return sign + "£" + amount
	}
	return sign + amount + " " + strings.ToUpper(currency)
}

// Dollars writes cents as a plain decimal for a form field: "42.10".
func Dollars(cents int64) string {
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}

// Count writes a whole number with thousands separators, the grouping
// Format uses: "7", "1,234", "−12,000". Counts on the manager's pages go
// through it, so a number reads the same beside an amount.
func Count(n int64) string {
	sign := ""
	u := uint64(n)
	if n < 0 {
		sign, u = "−", uint64(-(n+1))+1
	}
	digits := strconv.FormatUint(u, 10)
	var b strings.Builder
	b.WriteString(sign)
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}
