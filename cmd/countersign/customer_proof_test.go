package main

import (
	"reflect"
	"strings"
	"testing"

	"countersign/internal/confirmation"
)

func TestCustomerProofSettingsAreCheckedAtStart(t *testing.T) {
	env := map[string]string{"CONFIRM_PROOF": "code+sms", "CUSTOMER_ASSERTION_SECRETS": "shop=deadbeef-secretish",
		"MAIL_FROM": "a\r\nBcc: x@example.test"}
	_, err := parseConfig(nil, func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{`unknown proof "sms"`, "-assertion-secrets entry 1", "-mail-from"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "deadbeef") {
		t.Errorf("error repeats a secret: %v", err)
	}
	for _, bad := range []string{"=code", "shop=code,shop=account", "shop="} {
		if _, err := parseProofs(bad); err == nil {
			t.Errorf("parseProofs(%q) accepted it", bad)
		}
	}

	ok := map[string]string{"CONFIRM_PROOF": "code, shop-eu=assertion+account",
		"CUSTOMER_ASSERTION_SECRETS": "shop-eu=" + strings.Repeat("ab", 32)}
	c, err := parseConfig(nil, func(k string) string { return ok[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.confirmationConfig([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, nil)
	want := map[string][]confirmation.Proof{"*": {confirmation.ProofCode},
		"shop-eu": {confirmation.ProofAssertion, confirmation.ProofAccount}}
	if !reflect.DeepEqual(cfg.Proofs, want) {
		t.Errorf("proofs %v, want %v", cfg.Proofs, want)
	}
	if len(cfg.AssertionSecrets["shop-eu"]) != 32 || len(cfg.LinkKey) != 32 {
		t.Errorf("secrets %d bytes, link key %d bytes", len(cfg.AssertionSecrets["shop-eu"]), len(cfg.LinkKey))
	}
	// After a rotation (new key first) the old key's link key is kept, and
	// it is the link key the old key alone gave.
	old := []byte("0123456789abcdef0123456789abcdef")
	rotated := c.confirmationConfig([][]byte{[]byte("fedcba9876543210fedcba9876543210"), old}, nil)
	if len(rotated.OldLinkKeys) != 1 || !reflect.DeepEqual(rotated.OldLinkKeys[0], cfg.LinkKey) || reflect.DeepEqual(rotated.LinkKey, cfg.LinkKey) {
		t.Errorf("after a rotation: link key %x, old link keys %x; want a new key and the old one %x", rotated.LinkKey, rotated.OldLinkKeys, cfg.LinkKey)
	}
}

// TestTypedCodesAreOptIn: with nothing configured, every system takes the
// mail link and the customer's account, never a typed code (a code can be
// read out to an assistant); a business turns codes on per system in the
// same format.
func TestTypedCodesAreOptIn(t *testing.T) {
	c, err := parseConfig(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	got := c.confirmationConfig([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, nil).Proofs
	want := map[string][]confirmation.Proof{"*": {confirmation.ProofLink, confirmation.ProofAccount}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("default proofs %v, want %v", got, want)
	}
	on, err := parseProofs("shop-eu=code+link")
	if err != nil {
		t.Fatal(err)
	}
	want = map[string][]confirmation.Proof{"*": {confirmation.ProofLink, confirmation.ProofAccount},
		"shop-eu": {confirmation.ProofCode, confirmation.ProofLink}}
	if !reflect.DeepEqual(on, want) {
		t.Errorf("shop-eu=code+link: %v, want %v", on, want)
	}
}
