// Package money formats amounts of money for people, one way everywhere:
// quotes, the customer's page, the agents' cards, policies and metrics.
//
// Every amount is an integer count of its currency's minor units, as ISO
// 4217 (through CLDR) defines them: cents for USD and EUR, yen for JPY,
// which has none, fils for KWD and BHD, which have three. The names ending
// in Cents are that count whatever the currency.
package money

import (
	"strconv"
	"strings"

	"github.com/bojanz/currency"
)

// Digits is how many minor digits a currency has: 2 for USD and EUR, 0
// for JPY, 3 for KWD and BHD. An empty currency is US dollars; a code CLDR
// does not know keeps two, as every amount was read before currencies
// were told apart.
func Digits(currencyCode string) int {
	code := strings.ToUpper(currencyCode)
	if code == "" {
		return 2
	}
	if d, ok := currency.GetDigits(code); ok && currency.IsValid(code) {
		return int(d)
	}
	return 2
}

// Format writes an amount in a currency the way a receipt does: "$42.10",
// "$19,934.10", "€42.10", "£42.10", "42.10 CHF", "4,210 JPY" (yen have no
// minor units), "1.234 KWD" (three); an empty currency is US dollars. A
// negative amount takes a typographic minus: "−$12.60".
func Format(minor int64, currency string) string {
	sign := ""
	if minor < 0 {
		sign = "−"
	}
	amount := major(minor, Digits(currency), true)
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
func Dollars(cents int64) string { return Major(cents, "USD") }

// Major writes an amount as a plain decimal in the currency's main unit,
// for a form field: "42.10" for USD, "4210" for JPY, "1.234" for KWD.
func Major(minor int64, currency string) string {
	sign := ""
	if minor < 0 {
		sign = "-"
	}
	return sign + major(minor, Digits(currency), false)
}

// Example is an amount as a person types it in the currency, for the
// hint beside a field: "34.50", "3450" (JPY), "34.500" (KWD).
func Example(currency string) string {
	d := Digits(currency)
	if d == 0 {
		return "3450"
	}
	return "34.5" + strings.Repeat("0", d-1)
}

// major writes |minor| with digits decimals, grouped when group is set.
func major(minor int64, digits int, group bool) string {
	u := uint64(minor)
	if minor < 0 {
		u = uint64(-(minor + 1)) + 1
	}
	unit := uint64(pow10(digits))
	whole := strconv.FormatUint(u/unit, 10)
	if group {
		whole = groupDigits(whole)
	}
	if digits == 0 {
		return whole
	}
	frac := strconv.FormatUint(u%unit, 10)
	return whole + "." + strings.Repeat("0", digits-len(frac)) + frac
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
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
	return sign + groupDigits(strconv.FormatUint(u, 10))
}

func groupDigits(digits string) string {
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// Known reports whether code is an ISO 4217 currency code CLDR knows, as
// written upper case ("EUR", "JPY"): the check of a currency a person
// types, such as the one a policy's limits are in.
func Known(code string) bool {
	return len(code) == 3 && code == strings.ToUpper(code) && currency.IsValid(code)
}
