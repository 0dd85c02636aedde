// Package money formats amounts of money for people, one way everywhere:
// quotes, the customer's page, the agents' cards, policies and metrics.
package money

import (
	"fmt"
	"strings"
)

// Format writes cents in a currency the way a receipt does: "$42.10",
// "€42.10", "£42.10", "42.10 CHF"; an empty currency is US dollars. A
// negative amount takes a typographic minus: "−$12.60".
func Format(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "−", -cents
	}
	amount := fmt.Sprintf("%d.%02d", cents/100, cents%100)
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
