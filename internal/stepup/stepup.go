// Package stepup is the evidence of a fresh proof made for one decision:
// a passkey assertion whose WebAuthn challenge is not random but derived
// from what the person approved — the request's id, the version they saw
// and the hash of the arguments they approve. The signature is then
// evidence of exactly that approval: anyone holding the assertion and the
// passkey's public key can check it offline (Verify), and an assertion
// made for another request, another version or other arguments carries
// another challenge and fails.
//
// The package has no state and no store: the ceremony (options, the
// person's passkeys, the signature counter) is internal/factors'; the
// rule that a policy's approvals need one is the control plane's; the
// receipt carries an Assertion and `countersign receipts verify` calls
// Verify.
package stepup

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// domain separates step-up challenges from every other use of SHA-256 on
// the same bytes, and names the layout's version.
const domain = "countersign step-up v1"

// Challenge is the WebAuthn challenge of approving version of request
// invocationID with the arguments whose SHA-256 is argsHash:
//
//	SHA-256("countersign step-up v1" ‖ len(id) ‖ id ‖ version ‖ len(hash) ‖ hash)
//
// with the lengths as 4 bytes and the version as 8 bytes, big-endian, so
// that no two triples concatenate to the same bytes.
func Challenge(invocationID string, version int64, argsHash []byte) []byte {
	h := sha256.New()
	h.Write([]byte(domain))
	var n [8]byte
	binary.BigEndian.PutUint32(n[:4], uint32(len(invocationID)))
	h.Write(n[:4])
	h.Write([]byte(invocationID))
	binary.BigEndian.PutUint64(n[:], uint64(version))
	h.Write(n[:])
	binary.BigEndian.PutUint32(n[:4], uint32(len(argsHash)))
	h.Write(n[:4])
	h.Write(argsHash)
	return h.Sum(nil)
}

// Bytes are binary fields in JSON as unpadded base64url, as WebAuthn's
// own JSON forms write them.
type Bytes []byte

// MarshalJSON writes b as an unpadded base64url string.
func (b Bytes) MarshalJSON() ([]byte, error) {
	return json.Marshal(base64.RawURLEncoding.EncodeToString(b))
}

// UnmarshalJSON reads an unpadded base64url string.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("stepup: not unpadded base64url: %w", err)
	}
	*b = raw
	return nil
}

// Assertion is a passkey assertion kept with the decision it was made
// for: everything needed to check it without asking anyone.
type Assertion struct {
	// CredentialID is the passkey's credential id.
	CredentialID Bytes `json:"credential_id"`
	// PublicKey is the passkey's public key as registered, a COSE_Key.
	PublicKey Bytes `json:"public_key"`
	// RPID is the relying party id the passkey is scoped to (the
	// console's host name) and Origin the page's origin the browser
	// reported.
	RPID   string `json:"rp_id"`
	Origin string `json:"origin"`
	// AuthenticatorData, ClientDataJSON and Signature are the
	// authenticator's answer as the browser gave it.
	AuthenticatorData Bytes `json:"authenticator_data"`
	ClientDataJSON    Bytes `json:"client_data_json"`
	Signature         Bytes `json:"signature"`
}

// ErrInvalid wraps every reason an assertion is not evidence of the
// approval it is checked against.
var ErrInvalid = errors.New("stepup: the assertion is not evidence of this approval")

// Authenticator data flags (WebAuthn §6.1).
const (
	flagUserPresent  = 0x01
	flagUserVerified = 0x04
)

// Verify checks, offline, that a is a passkey assertion made for approving
// version of invocationID with the arguments hashing to argsHash: the
// client data is a "webauthn.get" at a.Origin whose challenge is
// Challenge(invocationID, version, argsHash); the authenticator data is
// for a.RPID with the user present and verified; and the signature over
// authenticator data ‖ SHA-256(client data) holds under a.PublicKey. It
// says nothing about whose passkey it is: the control plane checks that
// against the approver's registered passkeys, and a receipt's signature
// vouches for it afterwards.
func (a Assertion) Verify(invocationID string, version int64, argsHash []byte) error {
	return a.VerifyChallenge(Challenge(invocationID, version, argsHash))
}

// VerifyChallenge is Verify for any challenge derived from what was
// decided: a staff approval's (Challenge) or a customer's decision
// (internal/consent).
func (a Assertion) VerifyChallenge(want []byte) error {
	var cd struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
		Origin    string `json:"origin"`
	}
	if err := json.Unmarshal(a.ClientDataJSON, &cd); err != nil {
		return fmt.Errorf("%w: client data: %w", ErrInvalid, err)
	}
	if cd.Type != "webauthn.get" {
		return fmt.Errorf("%w: client data type %q, not webauthn.get", ErrInvalid, cd.Type)
	}
	challenge, err := base64.RawURLEncoding.DecodeString(cd.Challenge)
	if err != nil || !bytes.Equal(challenge, want) {
		return fmt.Errorf("%w: it was made for another request, version or decision", ErrInvalid)
	}
	if cd.Origin != a.Origin || a.Origin == "" {
		return fmt.Errorf("%w: made at %q, not %q", ErrInvalid, cd.Origin, a.Origin)
	}
	auth := a.AuthenticatorData
	if len(auth) < 37 {
		return fmt.Errorf("%w: authenticator data of %d bytes", ErrInvalid, len(auth))
	}
	rp := sha256.Sum256([]byte(a.RPID))
	if !bytes.Equal(auth[:32], rp[:]) {
		return fmt.Errorf("%w: made for another relying party than %q", ErrInvalid, a.RPID)
	}
	if auth[32]&flagUserPresent == 0 || auth[32]&flagUserVerified == 0 {
		return fmt.Errorf("%w: the authenticator did not verify the person", ErrInvalid)
	}
	key, err := webauthncose.ParsePublicKey(a.PublicKey)
	if err != nil {
		return fmt.Errorf("%w: public key: %w", ErrInvalid, err)
	}
	cdHash := sha256.Sum256(a.ClientDataJSON)
	signed := append(append([]byte{}, auth...), cdHash[:]...)
	ok, err := webauthncose.VerifySignature(key, signed, a.Signature)
	if err != nil || !ok {
		return fmt.Errorf("%w: the signature does not hold", ErrInvalid)
	}
	return nil
}
