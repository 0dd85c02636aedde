package customer

import (
	"testing"

	"golang.org/x/text/language"

	"countersign/internal/locale"
)

// TestQuestionAsksOnce: a title is asked with one question mark, as the
// customer's language writes it, whether it ends in a full stop,
// nothing, or a question mark of its own.
func TestQuestionAsksOnce(t *testing.T) {
	for _, tc := range []struct{ tag, in, want string }{
		{"en", "Refund $42.10 for your Walnut desk lamp", "Refund $42.10 for your Walnut desk lamp?"},
		{"en", "Cancel Pro plan for acme.example.", "Cancel Pro plan for acme.example?"},
		{"en", "Change where your order goes?", "Change where your order goes?"},
		{"fr", "Rembourser 42,10 € pour votre lampe.", "Rembourser 42,10 € pour votre lampe\u00a0?"},
		{"es", "Reembolsar 42,10 €", "¿Reembolsar 42,10 €?"},
		{"ar", "استرداد 42.10 €", "استرداد 42.10 €؟"},
		{"ar", "تغيير العنوان؟", "تغيير العنوان؟"},
	} {
		f := customerFrame{loc: locale.Shipped().For(language.MustParse(tc.tag))}
		if got := f.question(tc.in); got != tc.want {
			t.Errorf("%s: question(%q) = %q, want %q", tc.tag, tc.in, got, tc.want)
		}
	}
}
