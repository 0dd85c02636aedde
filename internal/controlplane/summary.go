package controlplane

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"countersign/internal/adapter"
	"countersign/internal/money"
)

var (
	moneyInText = regexp.MustCompile(`[$€£¥]\s?(\d{1,3}(?:,\d{3})*|\d+)(?:\.(\d{1,3}))?`)
	idInText    = regexp.MustCompile(`\b(?:sub|ord|in|prod|re|cus|inv)_[A-Za-z0-9]{4,}\b`)
)

// summaryDisagrees compares the model's own summary with the quote: a sum
// of money or an object id in the summary that the quote does not have is a
// disagreement. A sum is read in the quote's currency's minor units ("¥4,210"
// is 4210 for a yen quote, "$42.10" 4210 cents, and 421,000 yen or no
// amount of yen at all); its symbol is not compared. The quote wins; the
// disagreement is recorded, because it is a model bug someone should see.
func summaryDisagrees(summary string, q adapter.Quote) (bool, string) {
	if strings.TrimSpace(summary) == "" {
		return false, ""
	}
	var reasons []string
	if q.AmountCents != nil {
		for _, m := range moneyInText.FindAllStringSubmatch(summary, -1) {
			minor, ok := summaryMinor(m[1], m[2], q.Currency)
			if !ok || minor != *q.AmountCents {
				reasons = append(reasons, fmt.Sprintf("the summary says %s, the quote %s", m[0], money.Format(*q.AmountCents, q.Currency)))
			}
		}
	}
	for _, id := range idInText.FindAllString(summary, -1) {
		if id != q.Target.ID {
			reasons = append(reasons, fmt.Sprintf("the summary names %s, the quote %s", id, q.Target.ID))
		}
	}
	return len(reasons) > 0, strings.Join(reasons, "; ")
}

// summaryMinor reads whole and frac (the digits after the point) in the
// minor units of currency; more decimals than the currency has is not an
// amount of it.
func summaryMinor(whole, frac, currency string) (int64, bool) {
	digits := money.Digits(currency)
	if len(frac) > digits {
		return 0, false
	}
	n, _ := strconv.ParseInt(strings.ReplaceAll(whole+frac, ",", ""), 10, 64)
	for range digits - len(frac) {
		n *= 10
	}
	return n, true
}
