package sso

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"countersign/internal/apperr"
)

// FreshFor is how long a sign-in at the provider counts as fresh: a
// change to a provider account's passkeys needs one this recent, since
// such an account has no console password to ask for again.
const FreshFor = 5 * time.Minute

// clockSkew is how far ahead of the console's clock a provider's
// auth_time may be and still count.
const clockSkew = time.Minute

// Person is a person at the provider: the (issuer, subject) pair that
// identifies them (the session keeps it after a sign-in).
type Person struct {
	Issuer, Subject string
}

// Fresh reports whether a sign-in at the provider at authAt is recent
// enough at now (within FreshFor) to confirm a change.
func Fresh(authAt, now time.Time) bool {
	return !authAt.IsZero() && now.Sub(authAt) <= FreshFor && authAt.Sub(now) <= clockSkew
}

// BeginConfirm starts a confirmation of the person signed in already: a
// sign-in like Begin's (state, nonce, PKCE, bound to browser), that asks
// the provider to authenticate the person again whatever session it has
// (prompt=login, max_age=0, OpenID Connect Core 3.1.2.1). The state is
// bound to the browser under another hash than a sign-in's, so Finish
// knows it for a confirmation from the stored row alone: a browser cannot
// turn one into the other.
func (p *Provider) BeginConfirm(ctx context.Context, browser, next string) (string, error) {
	return p.begin(ctx, confirmHash(browser), next,
		oauth2.SetAuthURLParam("prompt", "login"), oauth2.SetAuthURLParam("max_age", "0"))
}

// confirmHash binds a confirmation's state to the browser's secret.
func confirmHash(browser string) []byte { return hash("confirm\x00" + browser) }

// authTime is when the ID token says the person authenticated (its
// auth_time), or the zero time when it does not say: a sign-in without
// the claim may have been answered silently from the provider's own
// session, so it never counts as fresh (Fresh). A confirmation, which
// asked max_age, needs the claim (OpenID Connect Core 2).
func (p *Provider) authTime(idToken *oidc.IDToken, confirm bool) (time.Time, error) {
	var claims struct {
		AuthTime *float64 `json:"auth_time"`
	}
	if err := idToken.Claims(&claims); err != nil {
		return time.Time{}, refuse(codeTokenInvalid, err)
	}
	if claims.AuthTime == nil {
		if confirm {
			return time.Time{}, refuse(codeConfirmStale, errors.New("the ID token has no auth_time although max_age was asked"))
		}
		return time.Time{}, nil
	}
	sec, frac := math.Modf(*claims.AuthTime)
	return time.Unix(int64(sec), int64(frac*1e9)), nil
}

// checkConfirm refuses a confirmation made by another person than the
// one signed in, or made longer ago than FreshFor (a provider that
// ignored max_age and answered from an old session).
func checkConfirm(idToken *oidc.IDToken, authAt time.Time, signedIn Person, now time.Time) error {
	if strings.TrimSuffix(idToken.Issuer, "/") != strings.TrimSuffix(signedIn.Issuer, "/") || idToken.Subject != signedIn.Subject {
		return refuse(codeConfirmOther, nil)
	}
	if !Fresh(authAt, now) {
		return refuse(codeConfirmStale, errors.New("auth_time "+authAt.UTC().Format(time.RFC3339)+" is not within "+FreshFor.String()))
	}
	return nil
}

// IsConfirmRefusal reports whether err refused a confirmation for what it
// was (another person, or not a new sign-in), as opposed to a sign-in's
// refusal: the person stays signed in, and the page says so.
func IsConfirmRefusal(err error) bool {
	e, ok := apperr.As(err)
	return ok && (e.Code == codeConfirmOther || e.Code == codeConfirmStale)
}
