package webtest

import (
	"context"
	"testing"

	"countersign/internal/controlplane"
)

// Consent is the customer's decision recorded on invocation id (the
// consent the receipt carries); it fails tb when none was recorded.
func (s *Stack) Consent(tb testing.TB, id string) controlplane.CustomerConsent {
	tb.Helper()
	c, ok, err := s.Control.Consent(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	if !ok {
		tb.Fatalf("no customer decision was recorded on %s", id)
	}
	return c
}
