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
	moneyInText = regexp.MustCompile(`[$€£]\s?(\d{1,3}(?:,\d{3})*|\d+)(?:\.(\d{1,2}))?`)
	idInText    = regexp.MustCompile(`\b(?:sub|ord|in|prod|re|cus|inv)_[A-Za-z0-9]{4,}\b`)
)

// summaryDisagrees compares the model's own summary with the quote: a sum
// of money or an object id in the summary that the quote does not have is a
// disagreement. The quote wins; the disagreement is recorded, because it is
// a model bug someone should see.
func summaryDisagrees(summary string, q adapter.Quote) (bool, string) {
	if strings.TrimSpace(summary) == "" {
		return false, ""
	}
	var reasons []string
	if q.AmountCents != nil {
		for _, m := range moneyInText.FindAllStringSubmatch(summary, -1) {
			cents := parseCents(m[1], m[2])
			if cents != *q.AmountCents {
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

func parseCents(whole, frac string) int64 {
	w, _ := strconv.ParseInt(strings.ReplaceAll(whole, ",", ""), 10, 64)
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
	}
	return w*100 + f
}
