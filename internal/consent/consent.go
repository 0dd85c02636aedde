// Package consent is the evidence of a customer's decision: what they
// were shown (the quote's digest), how they proved who they are (the
// proof kind), and, when they used a passkey, an assertion whose WebAuthn
// challenge is derived from the request, the quote version and digest
// they saw, and the decision itself. Like internal/stepup for staff, it
// holds no state: the ceremony is internal/factors' (or the customer
// pages'), the rule the control plane's, and the receipt carries an
// Evidence that `countersign receipts verify` checks offline.
package consent

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"countersign/internal/stepup"
)

// The decisions a customer's passkey can sign.
const (
	Confirm = "confirm"
	Decline = "decline"
)

// domain separates customer decision challenges from staff step-ups
// (stepup.Challenge) and names the layout's version.
const domain = "countersign customer decision v1"

// QuoteDigest is the SHA-256 of the quote as shown, in canonical JSON:
// object keys sorted, no insignificant space, numbers as written. The
// same quote gives the same digest whichever program re-encodes it, so a
// receipt's reader can recompute it from the quote the receipt carries.
func QuoteDigest(quote json.RawMessage) ([]byte, error) {
	canonical, err := Canonical(quote)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canonical)
	return sum[:], nil
}

// Canonical re-encodes JSON with object keys sorted (encoding/json sorts
// map keys) and numbers kept as written (json.Number).
func Canonical(raw json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("consent: the quote is not JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("consent: the quote has more than one JSON value")
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("consent: %w", err)
	}
	return out, nil
}

// Challenge is the WebAuthn challenge of a customer's decision on
// version quoteVersion of request invocationID whose quote, as shown,
// has quoteDigest:
//
//	SHA-256("countersign customer decision v1" ‖ len(id) ‖ id ‖ version ‖ len(digest) ‖ digest ‖ len(decision) ‖ decision)
//
// lengths as 4 bytes and the version as 8 bytes, big-endian.
func Challenge(invocationID string, quoteVersion int64, quoteDigest []byte, decision string) []byte {
	h := sha256.New()
	h.Write([]byte(domain))
	var n [8]byte
	field := func(b []byte) {
		binary.BigEndian.PutUint32(n[:4], uint32(len(b)))
		h.Write(n[:4])
		h.Write(b)
	}
	field([]byte(invocationID))
	binary.BigEndian.PutUint64(n[:], uint64(quoteVersion))
	h.Write(n[:])
	field(quoteDigest)
	field([]byte(decision))
	return h.Sum(nil)
}

// Evidence is what a customer's decision leaves for the receipt: the
// proof kind ("link", "code", "account", "assertion", "passkey"), the
// quote version and digest shown, the decision, and the passkey
// assertion when one was used.
type Evidence struct {
	Proof        string            `json:"proof"`
	Decision     string            `json:"decision"`
	QuoteVersion int64             `json:"quote_version"`
	QuoteDigest  stepup.Bytes      `json:"quote_digest"`
	Passkey      *stepup.Assertion `json:"passkey,omitempty"`
}

// ProofPasskey is the proof kind of a decision signed with a customer's
// passkey: evidence of it carries the assertion, and only it does.
const ProofPasskey = "passkey"

// Verify checks, offline, that e's passkey assertion (when there is one)
// was made for this decision on invocationID with the quote whose
// canonical JSON is quote, and that the quote is the one e names. The
// proof recorded is the proof used: the proof "passkey" without an
// assertion, or an assertion under another proof, is no evidence.
func (e Evidence) Verify(invocationID string, quote json.RawMessage) error {
	digest, err := QuoteDigest(quote)
	if err != nil {
		return err
	}
	if !bytes.Equal(digest, e.QuoteDigest) {
		return fmt.Errorf("%w: the quote is not the one the customer was shown", stepup.ErrInvalid)
	}
	if (e.Proof == ProofPasskey) != (e.Passkey != nil) {
		return fmt.Errorf("%w: the proof is %q, and a passkey assertion is recorded: %v", stepup.ErrInvalid, e.Proof, e.Passkey != nil)
	}
	if e.Passkey == nil {
		return nil
	}
	return e.Passkey.VerifyChallenge(Challenge(invocationID, e.QuoteVersion, e.QuoteDigest, e.Decision))
}
