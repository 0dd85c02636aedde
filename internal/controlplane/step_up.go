package controlplane

import (
	"context"
	"encoding/base64"
	"errors"

	"countersign/internal/apperr"
	"countersign/internal/stepup"
	"countersign/store"
)

// ErrStepUpRequired refuses a staff approval that its action's policy
// asks a fresh passkey proof of (Policy.NeedsStepUp) when the decision
// carries none: a Slack click, a bulk approval, or the console's plain
// approve form. The console's step-up page makes one. Callers match it
// with errors.Is, or on its code, and never change it: every refusal
// returns this one value.
var ErrStepUpRequired = &apperr.Error{Kind: apperr.Forbidden, Code: "step_up_required",
	Message: "This approval needs your passkey: the action's policy asks for a fresh proof made for this request.",
	Hint:    "Approve it on its step-up page in the console with your passkey."}

// StepUpInvalidCode is the code of a refused step-up assertion: made for
// another request, another version or other arguments, with a passkey
// that is not the approver's, or whose signature does not hold.
const StepUpInvalidCode = "step_up_invalid"

func stepUpInvalid(why string, err error) *apperr.Error {
	return &apperr.Error{Kind: apperr.Forbidden, Code: StepUpInvalidCode,
		Message: "The passkey's proof is not valid for this approval: " + why + ".",
		Hint:    "Open the request's step-up page again and approve what it shows with your own passkey.", Err: err}
}

// StepUpProof is the step-up an approval's event records beside how the
// person was identified: the passkey that signed it (its credential id,
// unpadded base64url). The assertion itself is kept with the approval
// (store.StepUp).
type StepUpProof struct {
	CredentialID string `json:"credential_id"`
}

// checkStepUp is the step-up rule of an approval by actor of row (locked)
// at its current version with the arguments hashing to hash: when need,
// an approval without an assertion is ErrStepUpRequired. An assertion,
// needed or not, must be made with one of the actor's own passkeys and be
// evidence of exactly this approval (stepup.Assertion.Verify) under the
// public key registered for it: the key the assertion names is replaced
// by the registered one (a COSE key has more than one encoding), so a
// signature by any other key fails. It returns the row to keep with the
// approval (nil without an assertion).
func checkStepUp(ctx context.Context, tx *store.Tx, actor Actor, row store.Invocation, hash []byte, a *stepup.Assertion, need bool) (*store.StepUp, error) {
	if a == nil {
		if need {
			return nil, ErrStepUpRequired
		}
		return nil, nil
	}
	key, err := tx.PasskeyPublicKey(ctx, actor.UserID, a.CredentialID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, stepUpInvalid("the passkey is not one of yours", err)
	}
	if err != nil {
		return nil, err
	}
	checked := *a
	checked.PublicKey = key
	if err := checked.Verify(row.ID, int64(row.Version), hash); err != nil {
		return nil, stepUpInvalid("it was not made for this request as it stands now, or not by this passkey", err)
	}
	return &store.StepUp{InvocationID: row.ID, UserID: actor.UserID, Version: row.Version, ArgsHash: hash,
		CredentialID: a.CredentialID, PublicKey: key, RPID: a.RPID, Origin: a.Origin,
		AuthenticatorData: a.AuthenticatorData, ClientDataJSON: a.ClientDataJSON, Signature: a.Signature}, nil
}

// withStepUp is actor as identified for an approval made with the
// step-up kept in su: its events record the passkey.
func withStepUp(actor Actor, su *store.StepUp) Actor {
	if su != nil {
		actor.Identified.StepUp = &StepUpProof{CredentialID: base64.RawURLEncoding.EncodeToString(su.CredentialID)}
	}
	return actor
}
