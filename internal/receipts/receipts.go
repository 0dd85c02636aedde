// Package receipts signs the receipt of a completed write: a compact JWS
// (RFC 7515) signed with Ed25519 (alg EdDSA, RFC 8037) whose payload says
// what was changed, in which system, with which arguments, with the
// system's reference and the read-back's evidence. Anyone holding the
// public key (the JWKS the API serves) can check, without asking
// Countersign, that it issued the receipt and that nothing in it changed.
package receipts

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Type is the JWS typ of a receipt.
const Type = "countersign-receipt+jwt"

// Signer holds the Ed25519 key receipts are signed with.
type Signer struct {
	key ed25519.PrivateKey
	kid string
}

// NewSigner is a signer with the key whose 32-byte seed is seed (the
// private key as RFC 8032 defines it).
func NewSigner(seed []byte) (*Signer, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("receipts: an Ed25519 key is a %d-byte seed, not %d bytes", ed25519.SeedSize, len(seed))
	}
	key := ed25519.NewKeyFromSeed(seed)
	return &Signer{key: key, kid: thumbprint(key.Public().(ed25519.PublicKey))}, nil
}

// Ephemeral is a signer with a fresh key, for a console that was given
// none: its receipts verify only against the keys it serves until it stops.
func Ephemeral() *Signer {
	seed := make([]byte, ed25519.SeedSize)
	_, _ = rand.Read(seed)
	s, _ := NewSigner(seed)
	return s
}

// KeyID is the key's id (kid): its JWK thumbprint (RFC 7638).
func (s *Signer) KeyID() string { return s.kid }

// JWKS is the public key as a JSON Web Key Set (RFC 7517, OKP keys of RFC
// 8037).
func (s *Signer) JWKS() map[string]any {
	return map[string]any{"keys": []any{map[string]any{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": s.kid,
		"x": b64(s.key.Public().(ed25519.PublicKey))}}}
}

// thumbprint is RFC 7638's: SHA-256 of the required members in
// lexicographic order, without spaces.
func thumbprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + b64(pub) + `"}`))
	return b64(sum[:])
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Sign returns the compact JWS of claims: base64url(header) "."
// base64url(JSON claims) "." base64url(Ed25519 signature of the two).
func (s *Signer) Sign(claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	header, _ := json.Marshal(map[string]string{"alg": "EdDSA", "typ": Type, "kid": s.kid})
	input := b64(header) + "." + b64(payload)
	return input + "." + b64(ed25519.Sign(s.key, []byte(input))), nil
}

// ErrInvalid is what Verify returns for anything but a receipt signed by
// the key.
var ErrInvalid = errors.New("receipts: not a receipt signed with this key")

// Verify checks a compact JWS against pub, as VerifyWithKeys does against
// a key set holding only pub, and returns its claims' JSON.
func Verify(jws string, pub ed25519.PublicKey) (json.RawMessage, error) {
	set, err := json.Marshal(map[string]any{"keys": []any{map[string]any{"kty": "OKP", "crv": "Ed25519", "kid": thumbprint(pub), "x": b64(pub)}}})
	if err != nil {
		return nil, err
	}
	_, claims, err := VerifyWithKeys(jws, set)
	return claims, err
}
