package views

import "countersign/internal/money"

// Plural writes a count with the noun that agrees with it: "1 request
// waiting", "1,234 requests waiting". Every count the pages write with a
// noun goes through it, so none reads "1 requests".
func Plural(n int64, one, many string) string { return money.Count(n) + " " + Noun(n, one, many) }

// Noun is the noun alone that agrees with n, for a count shown apart
// from its words.
func Noun(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
