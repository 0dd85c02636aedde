package factors

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"strings"
)

// RecoveryCodes is how many recovery codes a person gets at a time.
const RecoveryCodes = 10

// recoveryAlphabet has no letters that read like digits or like each
// other (no 0/o, 1/l/i): 32 symbols, so 10 of them are 50 bits.
const recoveryAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"

const recoveryLength = 10

// NewRecoveryCodes replaces userID's recovery codes with RecoveryCodes new
// ones, returned once as "xxxxx-xxxxx"; only their keyed hashes are kept.
func (s *Service) NewRecoveryCodes(ctx context.Context, userID int64) ([]string, error) {
	codes := make([]string, RecoveryCodes)
	hashes := make([][]byte, RecoveryCodes)
	for i := range codes {
		raw := randomCode()
		codes[i] = raw[:recoveryLength/2] + "-" + raw[recoveryLength/2:]
		hashes[i] = s.recoveryHash(raw)
	}
	if err := s.store.ReplaceRecoveryCodes(ctx, userID, hashes, s.now()); err != nil {
		return nil, err
	}
	return codes, nil
}

func randomCode() string {
	out := make([]byte, 0, recoveryLength)
	var b [1]byte
	for len(out) < recoveryLength {
		_, _ = rand.Read(b[:])
		// Rejection keeps every symbol equally likely.
		if int(b[0]) >= 256/len(recoveryAlphabet)*len(recoveryAlphabet) {
			continue
		}
		out = append(out, recoveryAlphabet[int(b[0])%len(recoveryAlphabet)])
	}
	return string(out)
}

// normaliseRecovery reads a code as typed: case, spaces and dashes aside.
func normaliseRecovery(code string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(code)))
}

func looksLikeRecoveryCode(code string) bool {
	c := normaliseRecovery(code)
	return len(c) == recoveryLength && strings.Trim(c, recoveryAlphabet) == ""
}

// recoveryHash is the kept form of a code: an HMAC under a key derived
// from the factor key, so a copy of the table alone cannot be searched.
func (s *Service) recoveryHash(code string) []byte {
	m := hmac.New(sha256.New, s.recovery)
	m.Write([]byte(normaliseRecovery(code)))
	return m.Sum(nil)
}
