package money

import (
	"strings"

	"github.com/bojanz/currency"
)

// InLocale writes an amount the way the locale (a BCP 47 tag: "fr",
// "en-IE") writes it, by CLDR: the symbol's place, the separators, the
// currency's own minor units. minor is in the currency's minor units:
// cents for EUR and USD, yen for JPY, which has none. InLocale(4210, "EUR",
// "fr") is "42,10 €" (a no-break space), in "en-IE" "€42.10";
// InLocale(4210, "JPY", "en") is "¥4,210". An empty currency is US dollars,
// as in Format; a code CLDR does not know is written by Format; a locale
// CLDR does not know falls back to its parent, then to English.
//
// A negative amount keeps CLDR's pattern (the sign's place) but takes
// the typographic minus U+2212 where CLDR writes a hyphen-minus:
// "−$12.60", "−12,60 €". Format writes it so, the staff console and every
// page show it so, and a hyphen reads as a dash in a sentence and may
// break a line after it.
//
// The direction marks CLDR puts in Arabic's amounts (U+200E, U+200F,
// U+061C) are left out: they are invisible characters, which the pages
// rightly flag in a quote's texts, and an amount is isolated as a whole
// where it is shown (<bdi>, unicode-bidi), so it reads in its own order.
func InLocale(minor int64, currencyCode, locale string) string {
	code := strings.ToUpper(currencyCode)
	if code == "" {
		code = "USD"
	}
	amount, err := currency.NewAmountFromInt64(minor, code)
	if err != nil {
		return Format(minor, currencyCode)
	}
	s := currency.NewFormatter(currency.NewLocale(locale)).Format(amount)
	if minor < 0 {
		s = strings.Replace(s, "-", "−", 1)
	}
	return directionMarks.Replace(s)
}

// directionMarks removes the bidirectional marks from an amount.
var directionMarks = strings.NewReplacer("\u200e", "", "\u200f", "", "\u061c", "")
