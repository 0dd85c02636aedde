package views

import "strconv"

// Plural writes a count with the noun that agrees with it: "1 request
// waiting", "1,234 requests waiting". Every count the pages write with a
// noun goes through it, so none reads "1 requests".
func Plural(n int64, one, many string) string { return thousandsView(n) + " " + Noun(n, one, many) }

// Noun is the noun alone that agrees with n, for a count shown apart
// from its words.
func Noun(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// thousandsView writes a count with thousands separators: 1234 → "1,234"
// (views may not import internal/money, which does the same).
func thousandsView(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}
