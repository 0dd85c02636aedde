package customer_test

import (
	"strings"
	"testing"

	"countersign/internal/locale"
)

// TestThePagesQuoteTheButtonsTheyName: a page's sentence that tells the
// customer which button to press takes the button's words from the
// button's own message (the mail's mail.link.button, the form's
// pages.prove.code.send) as a parameter, in every shipped language, so
// the two cannot drift apart.
func TestThePagesQuoteTheButtonsTheyName(t *testing.T) {
	c := locale.Shipped()
	for _, tag := range c.Offered() {
		l := c.For(tag)
		for id, button := range map[string]string{
			"pages.prove.link.sent":      "mail.link.button",
			"pages.requests_prove.step2": "pages.prove.code.send",
		} {
			words := l.T(button, nil)
			if got := l.T(id, locale.Params{"To": "j***@example.com", "Button": "\u27e6B\u27e7"}); !strings.Contains(got, "\u27e6B\u27e7") ||
				strings.Contains(got, words) {
				t.Errorf("%s %s does not quote %s (%q) by parameter: %q", tag, id, button, words, got)
			}
		}
	}
}
