package factors

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
)

// sealer encrypts secrets with AES-256-GCM, binding each to its owner.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealer{}, fmt.Errorf("factors: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealer{}, fmt.Errorf("factors: %w", err)
	}
	return sealer{aead: aead}, nil
}

// owner is the additional data: a sealed secret copied to another
// person's row does not open there.
func owner(userID int64) []byte { return []byte("user " + strconv.FormatInt(userID, 10)) }

func (s sealer) seal(userID int64, secret []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, secret, owner(userID))
}

func (s sealer) open(userID int64, sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("factors: sealed secret too short")
	}
	out, err := s.aead.Open(nil, sealed[:n], sealed[n:], owner(userID))
	if err != nil {
		return nil, errors.New("factors: a secret does not open with the factor key (was -factor-key changed?)")
	}
	return out, nil
}
