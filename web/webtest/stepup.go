package webtest

import (
	"context"
	"testing"

	"countersign/internal/stepup"
)

// RequireStepUp makes the policies of actions ask for a fresh passkey on
// every approval (the policy page's "on every approval"), as a manager
// would set them.
func (s *Stack) RequireStepUp(tb testing.TB, actions ...string) {
	tb.Helper()
	if _, err := s.Store.Pool().Exec(context.Background(),
		`UPDATE policies SET step_up_every = true WHERE action = ANY($1)`, actions); err != nil {
		tb.Fatal(err)
	}
}

// StepUps are the step-up assertions kept with the approvals of
// invocation id, oldest first.
func (s *Stack) StepUps(tb testing.TB, id string) []stepup.Assertion {
	tb.Helper()
	rows, err := s.Store.StepUpsOf(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]stepup.Assertion, 0, len(rows))
	for _, r := range rows {
		out = append(out, stepup.Assertion{CredentialID: r.CredentialID, PublicKey: r.PublicKey, RPID: r.RPID, Origin: r.Origin,
			AuthenticatorData: r.AuthenticatorData, ClientDataJSON: r.ClientDataJSON, Signature: r.Signature})
	}
	return out
}
