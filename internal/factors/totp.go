package factors

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"image/png"
	"strings"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// The authenticator apps' common settings (RFC 6238's defaults, which every
// app reads from the otpauth URI): 6 digits of HMAC-SHA1 per 30 seconds.
const (
	period = 30
	digits = otp.DigitsSix
	// skew is how many steps before or after now a code is still taken,
	// for a phone's clock that is a little off.
	skew = 1
)

// Enrolment is a new authenticator secret as the person sees it, once:
// the otpauth URI, its QR code as a PNG data URL, and the secret to type.
type Enrolment struct {
	URI    string
	QR     string
	Secret string
}

// StartTOTP makes a new authenticator secret for u and keeps it sealed,
// unconfirmed: it counts once ConfirmTOTP gets a valid code of it. A
// person who has a confirmed authenticator gets apperr.Conflict.
func (s *Service) StartTOTP(ctx context.Context, u accounts.User) (Enrolment, error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: s.issuer, AccountName: u.Email, Period: period, Digits: digits,
		Algorithm: otp.AlgorithmSHA1, SecretSize: 20})
	if err != nil {
		return Enrolment{}, err
	}
	err = s.store.StartTOTP(ctx, u.ID, s.seal.seal(u.ID, []byte(key.Secret())), s.now())
	if errors.Is(err, store.ErrConflict) {
		return Enrolment{}, &apperr.Error{Kind: apperr.Conflict, Code: "factor_exists",
			Message: "You already have an authenticator app set up.",
			Hint:    "To move to a new phone, remove the old app on this page first, then set up the new one."}
	}
	if err != nil {
		return Enrolment{}, err
	}
	img, err := key.Image(240, 240)
	if err != nil {
		return Enrolment{}, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return Enrolment{}, err
	}
	return Enrolment{URI: key.URL(), QR: "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()),
		Secret: groups(key.Secret(), 4)}, nil
}

// ConfirmTOTP confirms u's new authenticator with a code it shows, and
// returns the person's new recovery codes (shown once). The confirmation
// records controlplane.EventFactorAdded by u, identified as how. A wrong
// code is apperr.Invalid on the field "code".
func (s *Service) ConfirmTOTP(ctx context.Context, u accounts.User, how controlplane.Identification, code string) ([]string, error) {
	added, err := s.factorEvent(u, how, controlplane.EventFactorAdded, KindTOTP, "")
	if err != nil {
		return nil, err
	}
	ok, err := s.useTOTP(ctx, u.ID, code, &added)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &apperr.Error{Kind: apperr.Invalid, Code: "wrong_code", Message: "That code was not accepted.",
			Fields: map[string]string{"code": "Enter the 6-digit code the app shows now for the entry you just added " +
				"(check the phone's clock is set automatically)."}}
	}
	return s.replaceRecoveryCodes(ctx, u.ID, nil)
}

// useTOTP accepts code for userID's authenticator (a pending one too, then
// recording confirmed, when confirmed is not nil) when it is the code of a
// step within skew of now and no code of that or a later step was
// accepted before.
func (s *Service) useTOTP(ctx context.Context, userID int64, code string, confirmed *store.Event) (bool, error) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if len(code) != digits.Length() {
		return false, nil
	}
	f, err := s.store.TOTPFactorOf(ctx, userID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && f.ConfirmedAt == nil && confirmed == nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	secret, err := s.seal.open(userID, f.SecretSealed)
	if err != nil {
		return false, err
	}
	now := s.now()
	step := now.Unix() / period
	for d := int64(-skew); d <= skew; d++ {
		want, err := hotp.GenerateCodeCustom(string(secret), uint64(step+d),
			hotp.ValidateOpts{Digits: digits, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			return false, err
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) != 1 {
			continue
		}
		if f.LastStep != nil && *f.LastStep >= step+d {
			return false, nil // used: no write needed to say so
		}
		if s.beforeUse != nil {
			s.beforeUse()
		}
		return s.store.UseTOTPStep(ctx, f.ID, step+d, confirmed, now)
	}
	return false, nil
}

// groups writes s in groups of n separated by spaces, for reading aloud
// and typing.
func groups(s string, n int) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%n == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
