package shopadapter

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"countersign/internal/locale"
)

// TestThePolicysPercentagesComeFromTheCode: no shop message writes a
// percentage itself; each is the {{.Percent}} the code passes
// (restockingFeePercent), so a quote cannot state a fee other than the one
// the refund is computed with, in any language.
func TestThePolicysPercentagesComeFromTheCode(t *testing.T) {
	t.Parallel()
	written := regexp.MustCompile(`[0-9٠-٩][\s\x{00A0}\x{202F}]*[%٪]`)
	cat := locale.Shipped()
	for _, tag := range cat.Tags() {
		for _, m := range cat.Messages(tag) {
			for _, text := range []string{m.Zero, m.One, m.Two, m.Few, m.Many, m.Other} {
				if strings.HasPrefix(m.ID, "shop.") && written.MatchString(text) {
					t.Errorf("%s %s writes a percentage itself: %q", tag, m.ID, text)
				}
			}
		}
	}
	fee := shippingRule(english(), "changed_mind")
	if !strings.Contains(fee, fmt.Sprintf("%d%% restocking fee", restockingFeePercent)) {
		t.Errorf("the changed-mind rule %q does not state the %d%% fee", fee, restockingFeePercent)
	}
}
