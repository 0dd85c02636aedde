package console

import (
	"countersign/internal/controlplane"
	"countersign/internal/money"
)

// stepUpWords says which approvals of a policy need a fresh passkey
// proof, for the policies list; empty when none does.
func stepUpWords(p controlplane.Policy) string {
	switch {
	case p.StepUpEvery:
		return "a fresh passkey for every approval"
	case p.StepUpAboveCents != nil:
		return "a fresh passkey for approvals above " + money.Format(*p.StepUpAboveCents, "")
	}
	return ""
}
