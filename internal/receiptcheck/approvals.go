package receiptcheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/stepup"
)

// receiptApproval is what checkApprovals reads of one staff approval a
// receipt carries (web/api's approvalJSON).
type receiptApproval struct {
	UserID       int64                       `json:"user_id"`
	Name         string                      `json:"name"`
	FirstOfTwo   bool                        `json:"first_of_two"`
	IdentifiedBy controlplane.Identification `json:"identified_by"`
	Version      int64                       `json:"version"`
	ArgsHash     string                      `json:"args_hash"`
	StepUp       *stepup.Assertion           `json:"step_up"`
}

// checkApprovals checks, offline, the staff approvals in a receipt's
// claims whose signature already holds: every passkey assertion must be
// evidence of its approval (stepup.Assertion.Verify with the receipt's
// sub, the approval's version and arguments hash), and every approval's
// hash must be the SHA-256 of the receipt's arguments in their canonical
// form (adapter.Canonical: keys sorted, no spaces), so the arguments sent
// are the ones the person approved. It returns a line for each fact, or
// the reason the receipt is not evidence of its approvals.
func checkApprovals(raw json.RawMessage) ([]string, error) {
	var c struct {
		Subject   string            `json:"sub"`
		Args      json.RawMessage   `json:"args"`
		Approvals []receiptApproval `json:"approvals"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("the approvals cannot be read: %w", err)
	}
	argsHash, recomputed := adapter.ArgsHash(c.Args)
	var lines []string
	for _, a := range c.Approvals {
		hash, err := hex.DecodeString(a.ArgsHash)
		if err != nil || len(hash) != sha256.Size {
			return nil, fmt.Errorf("%s's approval names no arguments hash (%q)", a.Name, a.ArgsHash)
		}
		how := controlplane.IdentificationWords(a.IdentifiedBy.Method)
		if how == "" {
			how = "identification not recorded"
		}
		what := "approved"
		if a.FirstOfTwo {
			what = "gave the first of two approvals"
		}
		lines = append(lines, fmt.Sprintf("%s (console user %d, %s) %s at version %d, arguments SHA-256 %s", a.Name, a.UserID, how, what, a.Version, a.ArgsHash))
		if recomputed && !bytes.Equal(hash, argsHash) {
			return nil, fmt.Errorf("the receipt's arguments hash to %x while %s approved arguments hashing to %s", argsHash, a.Name, a.ArgsHash)
		}
		if a.StepUp != nil {
			if err := a.StepUp.Verify(c.Subject, a.Version, hash); err != nil {
				return nil, fmt.Errorf("the passkey assertion of %s's approval does not hold: %w", a.Name, err)
			}
			lines = append(lines, fmt.Sprintf("approved with a passkey by %s: the passkey's signature holds", a.Name))
		}
	}
	switch {
	case len(c.Approvals) == 0:
	case recomputed:
		lines = append(lines, "the arguments are the ones approved: their SHA-256 is each approval's")
	default:
		lines = append(lines, "the arguments' hash could not be recomputed (they are not a JSON object)")
	}
	return lines, nil
}
