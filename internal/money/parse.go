package money

import (
	"errors"
	"strings"
)

// ErrAmount is what Parse returns for text that is not an amount of money;
// its message is written for the person who typed it, as a field error.
var ErrAmount = errors.New("enter an amount like 34.50")

// Parse reads an amount a person typed in a currency's main unit ("34.50",
// "34.5", "$34.50", "1,234.00", "34") and returns it in cents. At most two
// decimals; no negative amounts; a currency symbol or code is accepted and
// ignored. Anything else is ErrAmount.
func Parse(s, currency string) (int64, error) {
	s = strings.TrimSpace(s)
	for _, sym := range []string{"$", "€", "£", strings.ToUpper(currency), strings.ToLower(currency)} {
		if sym != "" {
			s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, sym), sym))
		}
	}
	s = strings.ReplaceAll(s, ",", "")
	if s == "" {
		return 0, ErrAmount
	}
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" {
		whole = "0"
	}
	if dot && (len(frac) == 0 || len(frac) > 2) || len(whole) > 13 {
		return 0, ErrAmount
	}
	for len(frac) < 2 {
		frac += "0"
	}
	var cents int64
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, ErrAmount
		}
		cents = cents*10 + int64(r-'0')
	}
	return cents, nil
}
