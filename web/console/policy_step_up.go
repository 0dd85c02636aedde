package console

import (
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/money"
)

// stepUpWords says which approvals of a policy need a fresh passkey
// proof, for the policies list; empty when none does.
func stepUpWords(p controlplane.Policy) string {
	switch {
	case p.StepUpEvery:
		return say("console.rest.policies.step_up_every", nil)
	case p.StepUpAboveCents != nil:
		return say("console.rest.policies.step_up_above", locale.Params{"Amount": money.Format(*p.StepUpAboveCents, p.Currency())})
	}
	return ""
}
