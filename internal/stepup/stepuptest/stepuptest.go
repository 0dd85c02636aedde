// Package stepuptest gives tests a person's passkey, registered through
// internal/factors' own ceremony, and the step-up assertions it makes for
// an approval, as the console's step-up page would keep them.
package stepuptest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/factors"
	"countersign/internal/factors/softkey"
	"countersign/internal/stepup"
)

// The relying party the passkeys are registered with.
const (
	RPID   = "console.example.test"
	Origin = "https://console.example.test"
)

// Passkey is a person's registered passkey, in software.
type Passkey struct {
	Key *softkey.Key
}

// Register registers a new passkey for u with the factors service over
// st (a *store.Store) and throttle (accounts' service), at Origin.
func Register(tb testing.TB, st factors.Store, throttle factors.Throttle, u accounts.User) *Passkey {
	tb.Helper()
	key := make([]byte, factors.KeySize)
	_, _ = rand.Read(key)
	svc, err := factors.New(st, throttle, factors.Config{Key: key, PublicURL: Origin + "/"})
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	c, err := svc.BeginPasskeyRegistration(ctx, u)
	if err != nil {
		tb.Fatal(err)
	}
	k, body, err := softkey.Create(c.Options, RPID, Origin)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := svc.FinishPasskeyRegistration(ctx, u, controlplane.Identification{Method: controlplane.IdentifiedPassword}, c.ID, "Test key", body); err != nil {
		tb.Fatal(err)
	}
	return &Passkey{Key: k}
}

// Assert has the passkey sign the step-up challenge of approving version
// of request id with the arguments hashing to hash, at Origin.
func (p *Passkey) Assert(tb testing.TB, id string, version int64, hash []byte) *stepup.Assertion {
	tb.Helper()
	return p.AssertChallenge(tb, stepup.Challenge(id, version, hash))
}

// AssertChallenge has the passkey sign challenge at Origin: a customer's
// decision (consent.Challenge), or any other.
func (p *Passkey) AssertChallenge(tb testing.TB, challenge []byte) *stepup.Assertion {
	tb.Helper()
	b64 := base64.RawURLEncoding
	opts, _ := json.Marshal(map[string]any{"publicKey": map[string]any{"challenge": b64.EncodeToString(challenge)}})
	body, err := p.Key.Get(opts, RPID, Origin)
	if err != nil {
		tb.Fatal(err)
	}
	var r struct {
		RawID    stepup.Bytes `json:"rawId"`
		Response struct {
			ClientDataJSON    stepup.Bytes `json:"clientDataJSON"`
			AuthenticatorData stepup.Bytes `json:"authenticatorData"`
			Signature         stepup.Bytes `json:"signature"`
		} `json:"response"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		tb.Fatal(err)
	}
	return &stepup.Assertion{CredentialID: r.RawID, PublicKey: p.Key.PublicKey(), RPID: RPID, Origin: Origin,
		AuthenticatorData: r.Response.AuthenticatorData, ClientDataJSON: r.Response.ClientDataJSON, Signature: r.Response.Signature}
}

// Unregistered is a passkey no console knows, for an offline check that
// needs only its assertions (a receipt's).
func Unregistered(tb testing.TB) *Passkey {
	tb.Helper()
	b64 := base64.RawURLEncoding
	opts, _ := json.Marshal(map[string]any{"publicKey": map[string]any{"challenge": b64.EncodeToString([]byte("registration")),
		"user": map[string]any{"id": b64.EncodeToString([]byte("user"))}}})
	k, _, err := softkey.Create(opts, RPID, Origin)
	if err != nil {
		tb.Fatal(err)
	}
	return &Passkey{Key: k}
}
