package controlplane

import (
	"context"
	"encoding/binary"
	"errors"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/stepup"
	"countersign/store"
)

// ProofPasskey is the proof of a customer who decided with a passkey
// (confirmation.ProofPasskey): recorded only beside the assertion that
// made it.
const ProofPasskey = "passkey"

// errPasskeyNeedsItsSignature refuses a decision that would record the
// proof "passkey" without a verified assertion: a browser proven by a
// passkey decides only by signing the decision, never with the plain form
// (its proof was a signature of another decision, and it has no other).
var errPasskeyNeedsItsSignature = &apperr.Error{Kind: apperr.Forbidden, Code: "passkey_signature_required",
	Message: "You showed us it's you with your passkey, so you decide with it: nothing was decided.",
	Hint:    "Open the request's link again and decide there with your passkey."}

// errPasskeyNotYours refuses an assertion by a passkey that is not the
// deciding customer's for the request's system: another customer's,
// another system's, or one removed.
var errPasskeyNotYours = &apperr.Error{Kind: apperr.Forbidden, Code: "passkey_not_yours",
	Message: "This passkey is not one of yours for this business (it may have been removed), so nothing was decided.",
	Hint:    "Decide with a passkey listed on your passkeys page, or show us it's you another way."}

// customerPasskeyProof is the rule that the proof recorded is the proof
// used, checked in the decision's transaction: an actor proven by
// "passkey" decides only with an assertion, and an assertion only comes
// with that proof. The assertion's credential is loaded (and locked) as
// the customer's registered passkey for row's system; the returned
// assertion carries the registered public key in place of the one the
// client sent, so the signature is checked (shownQuote) and recorded
// under the key the customer added, and a key removed or not theirs is
// refused. Its counter may not go back; record says this transaction
// records the decision, and so the passkey's use (once per decision).
func (s *Service) customerPasskeyProof(ctx context.Context, tx *store.Tx, actor Actor, row store.Invocation, taskCustomer string, a *stepup.Assertion, record bool) (*stepup.Assertion, error) {
	if a == nil {
		if actor.Proof == ProofPasskey {
			return nil, errPasskeyNeedsItsSignature
		}
		return nil, nil
	}
	if actor.Proof != ProofPasskey {
		return nil, errPasskeyNeedsItsSignature
	}
	key, err := tx.CustomerPasskeyForDecision(ctx, row.System, adapter.NormaliseCustomerRef(taskCustomer), a.CredentialID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errPasskeyNotYours
	}
	if err != nil {
		return nil, err
	}
	checked := *a
	checked.PublicKey = key.PublicKey
	count := int64(-1)
	if len(a.AuthenticatorData) >= 37 {
		count = int64(binary.BigEndian.Uint32(a.AuthenticatorData[33:37]))
	}
	if count < 0 || (count < key.SignCount) {
		return nil, &apperr.Error{Kind: apperr.Forbidden, Code: "passkey_not_for_this_decision",
			Message: "The passkey's signature is older than its last use, so nothing was decided.",
			Hint:    "Decide again on the page, with the passkey when it asks."}
	}
	if record {
		if err := tx.UsedCustomerPasskey(ctx, key.ID, count, s.now()); err != nil {
			return nil, err
		}
	}
	return &checked, nil
}
