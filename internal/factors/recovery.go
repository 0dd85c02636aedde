package factors

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"strings"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/store"
)

// RecoveryCodes is how many recovery codes a person gets at a time.
const RecoveryCodes = 10

// recoveryAlphabet has no letters that read like digits or like each
// other (no 0/o, 1/l/i): 32 symbols, so 10 of them are 50 bits.
const recoveryAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"

const recoveryLength = 10

// NewRecoveryCodes replaces u's recovery codes with RecoveryCodes new ones,
// returned once as "xxxxx-xxxxx"; only their keyed hashes are kept. It
// records controlplane.EventFactorAdded (kind recovery_codes) by u,
// identified as how.
func (s *Service) NewRecoveryCodes(ctx context.Context, u accounts.User, how controlplane.Identification) ([]string, error) {
	e, err := s.factorEvent(u, how, controlplane.EventFactorAdded, KindRecoveryCodes, "")
	if err != nil {
		return nil, err
	}
	return s.replaceRecoveryCodes(ctx, u.ID, &e)
}

// replaceRecoveryCodes makes userID's new recovery codes, recording e
// when it is not nil.
func (s *Service) replaceRecoveryCodes(ctx context.Context, userID int64, e *store.Event) ([]string, error) {
	codes := make([]string, RecoveryCodes)
	hashes := make([][]byte, RecoveryCodes)
	for i := range codes {
		raw := randomCode()
		codes[i] = raw[:recoveryLength/2] + "-" + raw[recoveryLength/2:]
		hashes[i] = s.recoveryHash(raw)
	}
	if err := s.store.ReplaceRecoveryCodes(ctx, userID, hashes, s.now(), e); err != nil {
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

// SealCodes seals new recovery codes of userID under the factor key, for
// carrying them in the person's session to the page that shows them once
// (the sessions table never holds them readable).
func (s *Service) SealCodes(userID int64, codes []string) []byte {
	return s.seal.seal(userID, []byte(strings.Join(codes, " ")))
}

// OpenCodes opens what SealCodes sealed for userID.
func (s *Service) OpenCodes(userID int64, sealed []byte) ([]string, error) {
	raw, err := s.seal.open(userID, sealed)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(raw)), nil
}

// WithFactors lists the people who have a second factor or recovery
// codes, for the admin's "Reset second factor".
func (s *Service) WithFactors(ctx context.Context) (map[int64]bool, error) {
	return s.store.UsersWithFactors(ctx)
}
