package customer

import "testing"

// TestQuestionAsksOnce: a title is asked with one question mark, whether
// it ends in a full stop, nothing, or a question mark of its own.
func TestQuestionAsksOnce(t *testing.T) {
	for in, want := range map[string]string{
		"Refund $42.10 for your Walnut desk lamp": "Refund $42.10 for your Walnut desk lamp?",
		"Cancel Pro plan for acme.example.":       "Cancel Pro plan for acme.example?",
		"Change where your order goes?":           "Change where your order goes?",
	} {
		if got := question(in); got != want {
			t.Errorf("question(%q) = %q, want %q", in, got, want)
		}
	}
}
