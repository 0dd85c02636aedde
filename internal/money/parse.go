package money

import (
	"errors"
	"strings"
)

// ErrAmount is what Parse returns for text that is not an amount of money;
// its message is written for the person who typed it, as a field error.
// Example gives the currency's own example ("3450" for yen).
var ErrAmount = errors.New("enter an amount like 34.50")

// Parse reads an amount a person typed in a currency's main unit ("34.50",
// "34.5", "$34.50", "1,234.00", "34") and returns it in the currency's
// minor units: cents for USD, yen for JPY ("4210", no decimals allowed),
// fils for KWD ("1.234", up to three). At most the currency's decimals; no
// negative amounts; a currency symbol or code is accepted and ignored.
// Anything else is ErrAmount.
func Parse(s, currency string) (int64, error) {
	s = strings.TrimSpace(s)
	for _, sym := range []string{"$", "€", "£", "¥", strings.ToUpper(currency), strings.ToLower(currency)} {
		if sym != "" {
			s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, sym), sym))
		}
	}
	s = strings.ReplaceAll(s, ",", "")
	if s == "" {
		return 0, ErrAmount
	}
	digits := Digits(currency)
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" {
		whole = "0"
	}
	if dot && (len(frac) == 0 || len(frac) > digits) || len(whole) > 13 {
		return 0, ErrAmount
	}
	frac += strings.Repeat("0", digits-len(frac))
	var minor int64
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, ErrAmount
		}
		minor = minor*10 + int64(r-'0')
	}
	return minor, nil
}
