package views

import "testing"

// TestPluralAgrees: one takes the singular, every other count the plural,
// with thousands separators.
func TestPluralAgrees(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 requests"}, {1, "1 request"}, {2, "2 requests"}, {1234, "1,234 requests"}} {
		if got := Plural(tc.n, "request", "requests"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
