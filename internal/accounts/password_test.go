package accounts

import "testing"

// TestUnusablePasswordHashMatchesNoPassword: the hash an identity
// provider's account gets parses like any other (so a password sign-in at
// it costs what a wrong password costs), matches no password, and is
// computed once.
func TestUnusablePasswordHashMatchesNoPassword(t *testing.T) {
	h := UnusablePasswordHash()
	for _, guess := range []string{"", "password", "countersign-timing-equaliser"} {
		ok, err := CheckPassword(h, guess)
		if err != nil || ok {
			t.Errorf("CheckPassword(unusable, %q) = %v, %v; want false, nil", guess, ok, err)
		}
	}
	if again := UnusablePasswordHash(); again != h {
		t.Errorf("UnusablePasswordHash changed between calls: %q then %q", h, again)
	}
}
