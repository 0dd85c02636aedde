// Package factors holds staff's second factors: authenticator apps (TOTP)
// with their recovery codes, and the admin's choice of the roles whose
// password sign-ins must be followed by one. A factor is a row of its own
// kind (store.TOTPFactor today), so a passkey joins as another kind; the
// sign-in's factor step asks Verify, whatever the person holds.
//
// Codes are counted in the password throttle (accounts.Service), taken
// before any comparison, so a password and wrong codes after it share one
// budget. Secrets are sealed with the console's factor key and never
// logged; recovery codes are kept as a keyed hash.
package factors

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/store"
)

// Store is what factors read and write (*store.Store).
type Store interface {
	TOTPFactorOf(ctx context.Context, userID int64) (store.TOTPFactor, error)
	StartTOTP(ctx context.Context, userID int64, sealed []byte, at time.Time) error
	UseTOTPStep(ctx context.Context, factorID, step int64, confirmed *store.Event, at time.Time) (bool, error)
	ReplaceRecoveryCodes(ctx context.Context, userID int64, hashes [][]byte, at time.Time, e *store.Event) error
	SpendRecoveryCode(ctx context.Context, userID int64, hash []byte, at time.Time) (bool, error)
	RecoveryCodesLeft(ctx context.Context, userID int64) (int, error)
	RolesRequiringFactor(ctx context.Context) ([]string, error)
	WebAuthnHandle(ctx context.Context, userID int64, fresh []byte) ([]byte, error)
	PasskeysOf(ctx context.Context, userID int64) ([]store.Passkey, error)
	InsertPasskey(ctx context.Context, p store.Passkey, e store.Event) error
	UsePasskey(ctx context.Context, factorID, signCount int64, at time.Time) (bool, error)
	DeleteFactor(ctx context.Context, userID, factorID int64, kind string, keepOne bool, e store.Event) error
	ResetFactors(ctx context.Context, userID int64, e store.Event) (int, error)
	UsersWithFactors(ctx context.Context) (map[int64]bool, error)
	StartCeremony(ctx context.Context, idHash []byte, userID int64, purpose string, session []byte, now, expires time.Time) error
	TakeCeremony(ctx context.Context, idHash []byte, userID int64, purpose string, now time.Time) ([]byte, error)
	SetRoleFactorRequired(ctx context.Context, role string, required bool, by int64, keep []byte, e store.Event) error
}

// Throttle is the password throttle the codes count in
// (*accounts.Service).
type Throttle interface {
	TakeSignInAttempt(ctx context.Context, u accounts.User, ip string) error
	CompleteSignIn(ctx context.Context, u accounts.User, ip string) error
}

// KeySize is the factor key's length in bytes.
const KeySize = 32

// Config is what the service needs besides its store.
type Config struct {
	// Key seals TOTP secrets and keys the recovery codes' hashes
	// (KeySize bytes, -factor-key). Losing it loses every authenticator.
	Key []byte
	// Issuer names the console in people's authenticator apps.
	Issuer string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// PublicURL is the console's address as people reach it; the passkeys'
	// relying party is derived from it (RelyingParty). Empty: passkeys off.
	PublicURL string
	// Log receives refused passkey answers with the library's reason (nil:
	// discarded).
	Log *slog.Logger
}

// Service is the second-factor domain.
type Service struct {
	store    Store
	throttle Throttle
	seal     sealer
	recovery []byte // HMAC key of recovery codes' hashes
	issuer   string
	now      func() time.Time
	// rp is the passkeys' relying party; nil: passkeys off.
	rp  *webauthn.WebAuthn
	log *slog.Logger
	// beforeUse, when set, runs after a code matched and before the
	// UPDATE that spends its step; tests hold racing requests there.
	beforeUse func()
}

// New builds the service; it fails when the key is not KeySize bytes.
func New(st Store, throttle Throttle, cfg Config) (*Service, error) {
	if len(cfg.Key) != KeySize {
		return nil, fmt.Errorf("factors: the factor key has %d bytes, want %d", len(cfg.Key), KeySize)
	}
	seal, err := newSealer(subkey(cfg.Key, "totp secret"))
	if err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	issuer := cfg.Issuer
	if issuer == "" {
		issuer = "Countersign"
	}
	rp, err := NewRelyingParty(cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, throttle: throttle, seal: seal, recovery: subkey(cfg.Key, "recovery code"), issuer: issuer,
		now: now, rp: rp, log: log}, nil
}

// subkey derives a key for one purpose from the factor key, so sealing and
// hashing never share a key.
func subkey(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("countersign factors " + purpose))
	return m.Sum(nil)
}

// Status is what a person has set up.
type Status struct {
	// TOTP is true once an authenticator app is confirmed; Since is when.
	TOTP  bool
	Since time.Time
	// RecoveryLeft counts unused recovery codes.
	RecoveryLeft int
	// Passkeys counts the person's passkeys.
	Passkeys int
}

// Any reports whether the person has a second factor.
func (s Status) Any() bool { return s.TOTP || s.Passkeys > 0 }

// StatusOf returns what userID has set up.
func (s *Service) StatusOf(ctx context.Context, userID int64) (Status, error) {
	var st Status
	f, err := s.store.TOTPFactorOf(ctx, userID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return Status{}, err
	case f.ConfirmedAt != nil:
		st.TOTP, st.Since = true, *f.ConfirmedAt
	}
	if st.RecoveryLeft, err = s.store.RecoveryCodesLeft(ctx, userID); err != nil {
		return Status{}, err
	}
	keys, err := s.store.PasskeysOf(ctx, userID)
	if err != nil {
		return Status{}, err
	}
	st.Passkeys = len(keys)
	return st, nil
}

// ErrWrongCode is the answer to a code that is not right now: wrong, of
// another window, already used, or a recovery code spent.
var ErrWrongCode = &apperr.Error{Kind: apperr.Invalid, Code: "wrong_code",
	Message: "That code was not accepted.",
	Fields: map[string]string{"code": "Enter the 6-digit code your authenticator app shows now " +
		"(a code works once), or one of your recovery codes."}}

// Verify checks a second factor's code for u signing in from ip: a code of
// their authenticator app or one of their recovery codes. The attempt is
// counted in the password throttle before anything is compared
// (apperr.LimitReached when it is full); a right code completes the
// sign-in there. It returns the factor used ("totp" or "recovery"), or
// ErrWrongCode.
func (s *Service) Verify(ctx context.Context, u accounts.User, code, ip string) (string, error) {
	if err := s.throttle.TakeSignInAttempt(ctx, u, ip); err != nil {
		return "", err
	}
	kind := "totp"
	ok, err := s.useTOTP(ctx, u.ID, code, nil)
	if err == nil && !ok && looksLikeRecoveryCode(code) {
		kind = "recovery"
		ok, err = s.store.SpendRecoveryCode(ctx, u.ID, s.recoveryHash(code), s.now())
	}
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrWrongCode
	}
	if err := s.throttle.CompleteSignIn(ctx, u, ip); err != nil {
		return "", err
	}
	return kind, nil
}
