// Package softkey is a WebAuthn authenticator in software for tests: it
// answers the console's creation and request options as a browser with a
// platform authenticator would (attestation "none", ES256), and lets a test
// choose what a browser never would: the origin in the client data, the
// signature counter.
package softkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// Key is one credential of the authenticator.
type Key struct {
	ID     []byte
	Handle []byte
	priv   *ecdsa.PrivateKey
	// Count is the signature counter the next assertion carries.
	Count uint32
	// NoUserVerification answers assertions with the user present but
	// not verified (no PIN or biometric), as a plain security key would.
	NoUserVerification bool
	cose               []byte
}

// PublicKey is the credential's public key as a COSE_Key (RFC 9052), as
// the relying party stores it.
func (k *Key) PublicKey() []byte { return k.cose }

var b64 = base64.RawURLEncoding

// options reads the challenge (and the user handle, when creating) from
// the console's options ({"publicKey": {...}}).
func options(opts []byte) (challenge string, handle []byte, err error) {
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			User      struct {
				ID string `json:"id"`
			} `json:"user"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(opts, &o); err != nil {
		return "", nil, err
	}
	if o.PublicKey.User.ID != "" {
		if handle, err = b64.DecodeString(o.PublicKey.User.ID); err != nil {
			return "", nil, err
		}
	}
	return o.PublicKey.Challenge, handle, nil
}

func clientData(typ, challenge, origin string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	return b
}

// Create makes a new credential for the creation options opts, as the
// page at origin would get it for rpID, and returns it with the JSON the
// page posts (PublicKeyCredential's toJSON form).
func Create(opts []byte, rpID, origin string) (*Key, []byte, error) {
	challenge, handle, err := options(opts)
	if err != nil {
		return nil, nil, err
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	k := &Key{ID: make([]byte, 16), Handle: handle, priv: priv, Count: 1}
	_, _ = rand.Read(k.ID)
	ecdh, err := priv.PublicKey.ECDH()
	if err != nil {
		return nil, nil, err
	}
	raw := ecdh.Bytes() // 0x04 | x | y
	cose, err := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: raw[1:33], -3: raw[33:]})
	if err != nil {
		return nil, nil, err
	}
	k.cose = cose
	rpHash := sha256.Sum256([]byte(rpID))
	auth := append([]byte{}, rpHash[:]...)
	auth = append(auth, 0x45) // user present, user verified, attested credential data
	auth = binary.BigEndian.AppendUint32(auth, 0)
	auth = append(auth, make([]byte, 16)...) // AAGUID: none
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(k.ID)))
	auth = append(auth, k.ID...)
	auth = append(auth, cose...)
	att, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	if err != nil {
		return nil, nil, err
	}
	body, err := json.Marshal(map[string]any{"id": b64.EncodeToString(k.ID), "rawId": b64.EncodeToString(k.ID),
		"type": "public-key", "clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(clientData("webauthn.create", challenge, origin)),
			"attestationObject": b64.EncodeToString(att), "transports": []string{"internal"}}})
	return k, body, err
}

// Get answers the request options opts with an assertion of k as the page
// at origin would get it for rpID, carrying k.Count, which then grows by
// one.
func (k *Key) Get(opts []byte, rpID, origin string) ([]byte, error) {
	challenge, _, err := options(opts)
	if err != nil {
		return nil, err
	}
	rpHash := sha256.Sum256([]byte(rpID))
	auth := append([]byte{}, rpHash[:]...)
	flags := byte(0x05) // user present, user verified
	if k.NoUserVerification {
		flags = 0x01
	}
	auth = append(auth, flags)
	auth = binary.BigEndian.AppendUint32(auth, k.Count)
	k.Count++
	cd := clientData("webauthn.get", challenge, origin)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, auth...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, digest[:])
	if err != nil {
		return nil, fmt.Errorf("softkey: %w", err)
	}
	return json.Marshal(map[string]any{"id": b64.EncodeToString(k.ID), "rawId": b64.EncodeToString(k.ID),
		"type": "public-key", "clientExtensionResults": map[string]any{},
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(auth),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(k.Handle)}})
}
