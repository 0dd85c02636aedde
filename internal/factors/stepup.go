package factors

import (
	"context"
	"encoding/base64"
	"errors"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/stepup"
	"countersign/store"
)

// ErrNoPasskey answers a step-up of a person who has no passkey: the
// approval needs one, and the account page adds it.
var ErrNoPasskey = &apperr.Error{Kind: apperr.Invalid, Code: "no_passkey",
	Message: "This approval needs your passkey, and you have none on this console.",
	Hint:    "Add one on your account page (Account → Second factor → Add a passkey), then come back to approve.",
	Fields:  map[string]string{"passkey": "Add a passkey on your account page first."}}

// ErrStepUpRefused answers a step-up whose passkey answer is not evidence
// of this approval: made for another card, another version or other
// arguments, at another origin, without user verification, a ceremony
// taken or expired, a signature or counter that does not hold.
var ErrStepUpRefused = &apperr.Error{Kind: apperr.Invalid, Code: "step_up_refused",
	Message: "The passkey's answer was not accepted for this approval.",
	Hint:    "Approve again from this page with your passkey.",
	Fields:  map[string]string{"passkey": "Approve again from this page with your passkey."}}

// BeginStepUp starts a step-up of u for approving version of request
// invocationID with the arguments hashing to argsHash: a sign-in
// ceremony of purpose step_up whose challenge is stepup.Challenge of
// that triple (not random), allowing only u's passkeys, with user
// verification required. A person without a passkey gets ErrNoPasskey.
func (s *Service) BeginStepUp(ctx context.Context, u accounts.User, invocationID string, version int64, argsHash []byte) (Ceremony, error) {
	if s.rp == nil {
		return Ceremony{}, errPasskeysOff
	}
	w, _, err := s.webauthnUser(ctx, u)
	if err != nil {
		return Ceremony{}, err
	}
	if len(w.creds) == 0 {
		return Ceremony{}, ErrNoPasskey
	}
	opts, data, err := s.rp.BeginLogin(w, webauthn.WithChallenge(stepup.Challenge(invocationID, version, argsHash)),
		webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return Ceremony{}, err
	}
	return s.begin(ctx, u.ID, store.CeremonyStepUp, opts, data)
}

// FinishStepUp verifies u's answer to step-up ceremony id and returns it
// as the evidence kept with the decision. The triple is the caller's —
// the request as it loaded it now, never what the browser says — and
// must be the one the ceremony was begun for: its challenge is computed
// again and compared with the ceremony's before anything else, so an
// answer for another card, version or arguments is refused. Then, as at
// sign-in: this console's origin and RP ID, a signature by one of u's
// passkeys, user verification, a signature counter that grew (one
// UPDATE). The ceremony is spent whatever the answer. Anything refused
// is ErrStepUpRefused.
func (s *Service) FinishStepUp(ctx context.Context, u accounts.User, id string, response []byte, invocationID string, version int64, argsHash []byte) (stepup.Assertion, error) {
	if s.rp == nil {
		return stepup.Assertion{}, errPasskeysOff
	}
	data, ok, err := s.take(ctx, u.ID, store.CeremonyStepUp, id)
	if err != nil {
		return stepup.Assertion{}, err
	}
	if !ok {
		return stepup.Assertion{}, ErrStepUpRefused
	}
	want := base64.RawURLEncoding.EncodeToString(stepup.Challenge(invocationID, version, argsHash))
	if data.Challenge != want || data.UserVerification != protocol.VerificationRequired {
		s.refused(u, "step-up", errors.New("the ceremony was begun for another request, version or arguments"))
		return stepup.Assertion{}, ErrStepUpRefused
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return stepup.Assertion{}, ErrStepUpRefused
	}
	w, keys, err := s.webauthnUser(ctx, u)
	if err != nil {
		return stepup.Assertion{}, err
	}
	cred, err := s.rp.ValidateLogin(w, data, parsed)
	if err != nil {
		s.refused(u, "step-up", err)
		return stepup.Assertion{}, ErrStepUpRefused
	}
	if cred.Authenticator.CloneWarning {
		s.refused(u, "step-up", errors.New("the signature counter did not grow"))
		return stepup.Assertion{}, ErrStepUpRefused
	}
	var key *store.Passkey
	for i := range keys {
		if string(keys[i].CredentialID) == string(cred.ID) {
			key = &keys[i]
		}
	}
	if key == nil {
		return stepup.Assertion{}, ErrStepUpRefused
	}
	used, err := s.store.UsePasskey(ctx, key.FactorID, int64(cred.Authenticator.SignCount), s.now())
	if err != nil {
		return stepup.Assertion{}, err
	}
	if !used {
		return stepup.Assertion{}, ErrStepUpRefused
	}
	a := stepup.Assertion{CredentialID: cred.ID, PublicKey: key.PublicKey, RPID: s.rp.Config.RPID,
		Origin:            parsed.Response.CollectedClientData.Origin,
		AuthenticatorData: stepup.Bytes(parsed.Raw.AssertionResponse.AuthenticatorData),
		ClientDataJSON:    stepup.Bytes(parsed.Raw.AssertionResponse.ClientDataJSON),
		Signature:         stepup.Bytes(parsed.Raw.AssertionResponse.Signature)}
	// The library checked the same things its own way; the offline check
	// is the one a receipt's reader makes, so the evidence kept is
	// evidence that check accepts.
	if err := a.Verify(invocationID, version, argsHash); err != nil {
		s.refused(u, "step-up", err)
		return stepup.Assertion{}, ErrStepUpRefused
	}
	return a, nil
}
