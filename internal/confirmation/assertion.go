package confirmation

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/jsonkeys"
	"countersign/store"
)

// Assertion is what the business's own site states about the customer in
// front of it: "this browser is customer Sub of system Sys, opening link
// Link", for a few minutes, once. The site signs it with the system's secret (SignAssertion)
// and hands it to the customer's browser, which opens the link with
// "?assertion=<signed>". An assistant never holds the secret, so it cannot
// make one.
type Assertion struct {
	// Sub is the customer reference (their e-mail).
	Sub string `json:"sub"`
	// Sys is the system's name in this console ("shop").
	Sys string `json:"sys"`
	// IssuedAt and ExpiresAt are Unix seconds; an assertion may live at
	// most MaxAssertionLife.
	IssuedAt  int64 `json:"iat"`
	ExpiresAt int64 `json:"exp"`
	// Nonce is a random string of at least 16 characters; an assertion
	// proves once.
	Nonce string `json:"nonce"`
	// Link, in a customer assertion, is the selector of the link it opens
	// (the part of /c/<selector>.<verifier> before the dot): it proves the
	// customer for that link's request only, so one seen by anyone else
	// before the customer spends it opens no other request of theirs.
	Link string `json:"lnk,omitempty"`
	// Locale, optional in a customer assertion, is the business's word
	// for the customer's language (a BCP 47 tag such as "fr"): it comes
	// first in the order that picks the language of their pages
	// (internal/locale). One the console does not ship is passed over.
	Locale string `json:"loc,omitempty"`
	// Aud, only in a task assertion (SignTaskAssertion), is the id of the
	// assistant the business vouches to.
	Aud string `json:"aud,omitempty"`
}

// MaxAssertionLife bounds an assertion's validity.
const MaxAssertionLife = 10 * time.Minute

// assertionSkew tolerates clocks a little ahead of ours.
const assertionSkew = time.Minute

const assertionContext = "countersign customer assertion v1."

// SignAssertion returns a signed with secret: base64url(JSON) "."
// base64url(HMAC-SHA256(secret, context + payload)). The business's site
// computes the same in its own language.
func SignAssertion(secret []byte, a Assertion) string {
	return signAssertion(secret, assertionContext, a)
}

func signAssertion(secret []byte, context string, a Assertion) string {
	raw, _ := json.Marshal(a)
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + base64.RawURLEncoding.EncodeToString(assertionMAC(secret, context, payload))
}

func assertionMAC(secret []byte, context, payload string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(context + payload))
	return m.Sum(nil)
}

// openAssertion checks signed against secret under context (which keeps
// an assertion made for one purpose from passing for another) and returns
// it when the signature holds, it is well formed, its nonce has 16 to 128
// characters and it is unexpired and short-lived; otherwise why it is not,
// as the end of a sentence. Spending the nonce is the caller's.
func openAssertion(secret []byte, context, signed string, now time.Time) (Assertion, string) {
	payload, sig, ok := strings.Cut(signed, ".")
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(mac, assertionMAC(secret, context, payload)) {
		return Assertion{}, "its signature is wrong."
	}
	a, ok := decodeAssertion(payload)
	if !ok {
		return Assertion{}, "it is malformed."
	}
	iat, exp := time.Unix(a.IssuedAt, 0), time.Unix(a.ExpiresAt, 0)
	switch {
	case len(a.Nonce) < 16 || len(a.Nonce) > 128:
		return Assertion{}, "its nonce must have 16 to 128 characters."
	case iat.After(now.Add(assertionSkew)) || exp.Sub(iat) > MaxAssertionLife || !now.Before(exp):
		return Assertion{}, "it has expired or lives too long."
	}
	return a, ""
}

// decodeAssertion reads the payload of a signed assertion, strictly: a
// key named twice makes it malformed, so no reader can take another
// customer from it than the one checked.
func decodeAssertion(payload string) (Assertion, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return Assertion{}, false
	}
	if _, dup := jsonkeys.Duplicate(raw); dup {
		return Assertion{}, false
	}
	var a Assertion
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return a, dec.Decode(&a) == nil
}

// CheckAssertion verifies signed for the link: signed with the link's
// system's secret, for that system, the link's customer and this very link,
// unexpired, never used before. It returns the opened link; any other assertion is
// apperr.Forbidden (code "assertion_refused"), saying what is wrong.
func (s *Service) CheckAssertion(ctx context.Context, token, signed string) (Opened, error) {
	o, err := s.Open(ctx, token)
	if err != nil {
		return Opened{}, err
	}
	refuse := func(why string) error {
		return &apperr.Error{Kind: apperr.Forbidden, Code: "assertion_refused", Message: "The sign-in from the business's site was not accepted: " + why,
			Hint: "Open the request again from the site where you are signed in, or confirm another way."}
	}
	secret := s.cfg.AssertionSecrets[o.System]
	if !s.accepts(o.System, ProofAssertion) || len(secret) == 0 {
		return Opened{}, refuse("this system does not use it.")
	}
	now := s.now()
	a, why := openAssertion(secret, assertionContext, signed, now)
	switch {
	case why != "":
		return Opened{}, refuse(why)
	case a.Sys != o.System:
		return Opened{}, refuse("it was made for another system.")
	case !controlplane.SameCustomer(a.Sub, o.CustomerRef):
		return Opened{}, refuse("it names another customer.")
	case a.Link == "" || a.Link != selectorOf(token):
		return Opened{}, refuse("it was made for another link.")
	}
	exp := time.Unix(a.ExpiresAt, 0)
	if err := s.store.UseCustomerAssertion(ctx, o.System, a.Nonce, o.CustomerRef, exp, now); errors.Is(err, store.ErrConflict) {
		return Opened{}, refuse("it was used already.")
	} else if err != nil {
		return Opened{}, err
	}
	o.Locale = a.Locale
	return o, nil
}

// selectorOf is the public half of a link's token.
func selectorOf(token string) string {
	selector, _, _ := strings.Cut(token, ".")
	return selector
}
