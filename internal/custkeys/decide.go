package custkeys

import (
	"context"
	"encoding/base64"
	"errors"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"countersign/internal/consent"
	"countersign/internal/stepup"
	"countersign/store"
)

// Decision is what a customer's passkey signs: version QuoteVersion of
// request InvocationID, whose quote as shown has QuoteDigest
// (consent.QuoteDigest), and the decision (consent.Confirm or
// consent.Decline).
type Decision struct {
	InvocationID string
	QuoteVersion int64
	QuoteDigest  []byte
	Decision     string
}

func (d Decision) challenge() []byte {
	return consent.Challenge(d.InvocationID, d.QuoteVersion, d.QuoteDigest, d.Decision)
}

func (d Decision) valid() bool {
	return d.InvocationID != "" && len(d.QuoteDigest) > 0 && (d.Decision == consent.Confirm || d.Decision == consent.Decline)
}

// BeginDecision starts c's passkey decision d: an assertion ceremony whose
// challenge is consent.Challenge of d (not random), allowing only c's
// passkeys for c.System, with user verification required. A customer
// without a passkey there gets ErrNoPasskey.
func (s *Service) BeginDecision(ctx context.Context, c Customer, d Decision) (Ceremony, error) {
	if !s.On() {
		return Ceremony{}, ErrOff
	}
	if !d.valid() {
		return Ceremony{}, ErrRefused
	}
	c = c.normalised()
	w, _, err := s.user(ctx, c)
	if err != nil {
		return Ceremony{}, err
	}
	if len(w.creds) == 0 {
		return Ceremony{}, ErrNoPasskey
	}
	opts, data, err := s.rp.BeginLogin(w, webauthn.WithChallenge(d.challenge()),
		webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return Ceremony{}, err
	}
	return s.begin(ctx, store.CustomerCeremony{System: c.System, CustomerRef: c.Ref, InvocationID: d.InvocationID,
		Purpose: store.CustomerCeremonyDecide}, opts, data)
}

// FinishDecision verifies c's answer to decision ceremony id and returns
// it as the evidence kept with the decision. d is the caller's — the
// request as it loaded it now and the decision posted, never what the
// browser says it saw — and must be the one the ceremony was begun for:
// the ceremony is taken for this customer and request only, and its
// challenge computed again from d and compared before anything else, so
// an answer for another request, version, quote or decision is refused.
// Then: this console's origin and RP ID, a signature by one of c's
// passkeys for this system, user verification, a signature counter that
// grew (one UPDATE), and the offline check a receipt's reader makes
// (stepup.Assertion.VerifyChallenge). The ceremony is spent whatever the
// answer. Anything refused is ErrRefused.
func (s *Service) FinishDecision(ctx context.Context, c Customer, id string, response []byte, d Decision) (stepup.Assertion, error) {
	if !s.On() {
		return stepup.Assertion{}, ErrOff
	}
	c = c.normalised()
	data, ok, err := s.take(ctx, store.CustomerCeremony{System: c.System, CustomerRef: c.Ref, InvocationID: d.InvocationID,
		Purpose: store.CustomerCeremonyDecide}, id)
	if err != nil {
		return stepup.Assertion{}, err
	}
	if !ok || !d.valid() {
		return stepup.Assertion{}, ErrRefused
	}
	want := d.challenge()
	if data.Challenge != base64.RawURLEncoding.EncodeToString(want) || data.UserVerification != protocol.VerificationRequired {
		s.refused(c, "decision", errors.New("the ceremony was begun for another request, version, quote or decision"))
		return stepup.Assertion{}, ErrRefused
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return stepup.Assertion{}, ErrRefused
	}
	w, keys, err := s.user(ctx, c)
	if err != nil {
		return stepup.Assertion{}, err
	}
	cred, err := s.rp.ValidateLogin(w, data, parsed)
	if err != nil {
		s.refused(c, "decision", err)
		return stepup.Assertion{}, ErrRefused
	}
	if cred.Authenticator.CloneWarning {
		s.refused(c, "decision", errors.New("the signature counter did not grow"))
		return stepup.Assertion{}, ErrRefused
	}
	var key *store.CustomerPasskey
	for i := range keys {
		if string(keys[i].CredentialID) == string(cred.ID) {
			key = &keys[i]
		}
	}
	if key == nil {
		return stepup.Assertion{}, ErrRefused
	}
	if s.beforeUse != nil {
		s.beforeUse()
	}
	used, err := s.store.UseCustomerPasskey(ctx, key.ID, int64(cred.Authenticator.SignCount), s.now())
	if err != nil {
		return stepup.Assertion{}, err
	}
	if !used {
		return stepup.Assertion{}, ErrRefused
	}
	a := stepup.Assertion{CredentialID: cred.ID, PublicKey: key.PublicKey, RPID: s.rp.Config.RPID,
		Origin:            parsed.Response.CollectedClientData.Origin,
		AuthenticatorData: stepup.Bytes(parsed.Raw.AssertionResponse.AuthenticatorData),
		ClientDataJSON:    stepup.Bytes(parsed.Raw.AssertionResponse.ClientDataJSON),
		Signature:         stepup.Bytes(parsed.Raw.AssertionResponse.Signature)}
	// The library checked the same things its own way; the evidence kept
	// must be evidence the receipt's offline check accepts.
	if err := a.VerifyChallenge(want); err != nil {
		s.refused(c, "decision", err)
		return stepup.Assertion{}, ErrRefused
	}
	return a, nil
}
