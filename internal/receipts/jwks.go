package receipts

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The reasons VerifyWithKeys refuses a receipt; each is also ErrInvalid.
var (
	// ErrMalformed: not a compact JWS of three base64url parts with a JSON
	// header and payload.
	ErrMalformed = fmt.Errorf("%w: not a compact JWS", ErrInvalid)
	// ErrAlgorithm: the header names an algorithm other than EdDSA (none,
	// HS256 and every other one are refused, whatever the key set holds).
	ErrAlgorithm = fmt.Errorf("%w: the algorithm is not EdDSA", ErrInvalid)
	// ErrUnknownKey: the key set has no Ed25519 key with the header's kid.
	ErrUnknownKey = fmt.Errorf("%w: no key of the key set has its kid", ErrInvalid)
	// ErrSignature: the signature does not match the header and claims.
	ErrSignature = fmt.Errorf("%w: the signature does not match", ErrInvalid)
	// ErrType: the header's typ is not Type, so the JWS is not a receipt
	// (another token signed with the same key is not one).
	ErrType = fmt.Errorf("%w: the typ is not %s", ErrInvalid, Type)
	// ErrKeyID: the key set's key has a kid other than its RFC 7638
	// thumbprint, which is how every receipt key is named.
	ErrKeyID = fmt.Errorf("%w: the key's kid is not its thumbprint", ErrInvalid)
)

// Header is a receipt's JOSE header.
type Header struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	Kid string `json:"kid"`
}

// VerifyWithKeys checks a compact JWS against a JSON Web Key Set (as GET
// /api/v1/receipts/jwks.json serves it): the header's alg must be EdDSA,
// its typ Type, its kid one of the set's OKP Ed25519 keys whose kid is its
// RFC 7638 thumbprint, and the signature that key's. It returns the header
// and the claims' JSON, or an error wrapping one of ErrMalformed,
// ErrAlgorithm, ErrType, ErrUnknownKey, ErrKeyID and ErrSignature that
// says why.
func VerifyWithKeys(jws string, jwks []byte) (Header, json.RawMessage, error) {
	var h Header
	parts := strings.Split(strings.TrimSpace(jws), ".")
	if len(parts) != 3 {
		return h, nil, fmt.Errorf("%w (%d parts, want header.payload.signature)", ErrMalformed, len(parts))
	}
	header, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	payload, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return h, nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err := json.Unmarshal(header, &h); err != nil {
		return h, nil, fmt.Errorf("%w: the header is not JSON: %w", ErrMalformed, err)
	}
	if !json.Valid(payload) {
		return h, nil, fmt.Errorf("%w: the claims are not JSON", ErrMalformed)
	}
	if h.Alg != "EdDSA" {
		return h, nil, fmt.Errorf("%w (alg %q)", ErrAlgorithm, h.Alg)
	}
	if h.Typ != Type {
		return h, nil, fmt.Errorf("%w (typ %q)", ErrType, h.Typ)
	}
	var set struct {
		Keys []struct {
			Kty, Crv, Kid, X, Alg string
		} `json:"keys"`
	}
	if err := json.Unmarshal(jwks, &set); err != nil {
		return h, nil, fmt.Errorf("receipts: the key set is not a JWKS: %w", err)
	}
	for _, k := range set.Keys {
		if k.Kid != h.Kid || k.Kty != "OKP" || k.Crv != "Ed25519" || (k.Alg != "" && k.Alg != "EdDSA") {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return h, nil, fmt.Errorf("receipts: the key set's key %s is not an Ed25519 public key", k.Kid)
		}
		if thumbprint(x) != k.Kid {
			return h, nil, fmt.Errorf("%w (kid %q, thumbprint %s)", ErrKeyID, k.Kid, thumbprint(x))
		}
		if !ed25519.Verify(ed25519.PublicKey(x), []byte(parts[0]+"."+parts[1]), sig) {
			return h, nil, fmt.Errorf("%w (key %s)", ErrSignature, h.Kid)
		}
		return h, payload, nil
	}
	return h, nil, fmt.Errorf("%w (kid %q)", ErrUnknownKey, h.Kid)
}
