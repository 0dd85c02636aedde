package webtest_test

import (
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/web/webtest"
)

// TestCodeInReadsTheCodeInEveryLanguage: the code is found in a code
// mail in each shipped language, not the quote's own numbers above it.
func TestCodeInReadsTheCodeInEveryLanguage(t *testing.T) {
	inv := controlplane.Invocation{System: "shop", Quote: adapter.Quote{Title: "Refund order 245695",
		Customer: &adapter.CustomerFacts{Reference: "Order #245695"}}}
	for _, tag := range locale.Supported() {
		m := confirmation.CodeMail(locale.Shipped().For(tag), adapter.Contact{Email: "j@example.test"}, "123456", inv,
			adapter.Brand{Name: webtest.ShopName}, inv.CreatedAt)
		if got := webtest.CodeIn.FindString(m.Body); got != "123456" {
			t.Errorf("%s: %q in\n%s", tag, got, m.Body)
		}
	}
}
