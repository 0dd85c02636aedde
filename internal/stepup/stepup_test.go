package stepup_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"countersign/internal/factors/softkey"
	"countersign/internal/stepup"
)

const (
	rpID   = "console.example"
	origin = "https://console.example"
)

var b64 = base64.RawURLEncoding

// assert has a fresh passkey sign the step-up challenge of (id, version,
// hash) as a browser at at would, and returns the assertion as the
// console keeps it.
func assert(t *testing.T, key *softkey.Key, id string, version int64, hash []byte, at string) stepup.Assertion {
	t.Helper()
	opts, _ := json.Marshal(map[string]any{"publicKey": map[string]any{"challenge": b64.EncodeToString(stepup.Challenge(id, version, hash))}})
	body, err := key.Get(opts, rpID, at)
	if err != nil {
		t.Fatal(err)
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
		t.Fatal(err)
	}
	return stepup.Assertion{CredentialID: r.RawID, PublicKey: key.PublicKey(), RPID: rpID, Origin: origin,
		AuthenticatorData: r.Response.AuthenticatorData, ClientDataJSON: r.Response.ClientDataJSON, Signature: r.Response.Signature}
}

func newKey(t *testing.T) *softkey.Key {
	t.Helper()
	opts, _ := json.Marshal(map[string]any{"publicKey": map[string]any{"challenge": b64.EncodeToString([]byte("registration")),
		"user": map[string]any{"id": b64.EncodeToString([]byte("user-1"))}}})
	key, _, err := softkey.Create(opts, rpID, origin)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestAnAssertionIsEvidenceOfExactlyOneApproval(t *testing.T) {
	key := newKey(t)
	hash := sha256.Sum256([]byte(`{"amount":"180.00","order_id":"1042"}`))
	other := sha256.Sum256([]byte(`{"amount":"1800.00","order_id":"1042"}`))
	a := assert(t, key, "inv_1", 3, hash[:], origin)
	if err := a.Verify("inv_1", 3, hash[:]); err != nil {
		t.Fatalf("the approval it was made for: %v", err)
	}
	for name, check := range map[string]func() error{
		"another request": func() error { return a.Verify("inv_2", 3, hash[:]) },
		"another version": func() error { return a.Verify("inv_1", 4, hash[:]) },
		"other arguments": func() error { return a.Verify("inv_1", 3, other[:]) },
		"another key":     func() error { b := a; b.PublicKey = newKey(t).PublicKey(); return b.Verify("inv_1", 3, hash[:]) },
		"another origin":  func() error { b := a; b.Origin = "https://evil.example"; return b.Verify("inv_1", 3, hash[:]) },
		"another rp":      func() error { b := a; b.RPID = "evil.example"; return b.Verify("inv_1", 3, hash[:]) },
		"a changed byte":  func() error { b := a; b.Signature = flip(a.Signature); return b.Verify("inv_1", 3, hash[:]) },
		"changed auth data": func() error {
			b := a
			b.AuthenticatorData = flip(a.AuthenticatorData)
			return b.Verify("inv_1", 3, hash[:])
		},
		"made elsewhere": func() error {
			return assert(t, key, "inv_1", 3, hash[:], "https://evil.example").Verify("inv_1", 3, hash[:])
		},
	} {
		if err := check(); !errors.Is(err, stepup.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestChallengesOfDifferentTriplesDiffer(t *testing.T) {
	// The lengths keep an id's tail from passing for the version's bytes.
	a := stepup.Challenge("inv_1", 3, []byte{1, 2})
	for _, c := range [][]byte{
		stepup.Challenge("inv_", 3, []byte{1, 2}),
		stepup.Challenge("inv_1", 3, []byte{1}),
		stepup.Challenge("inv_1", 3<<32, []byte{1, 2}),
		stepup.Challenge("inv_1\x00\x00\x00\x00\x00\x00\x00\x03", 0, []byte{1, 2}),
	} {
		if bytes.Equal(a, c) {
			t.Fatalf("two triples share the challenge %x", a)
		}
	}
	if !bytes.Equal(a, stepup.Challenge("inv_1", 3, []byte{1, 2})) {
		t.Fatal("the challenge is not a function of its triple")
	}
}

func TestAssertionRoundTripsThroughJSON(t *testing.T) {
	key := newKey(t)
	hash := sha256.Sum256([]byte("args"))
	a := assert(t, key, "inv_9", 1, hash[:], origin)
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back stepup.Assertion
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if err := back.Verify("inv_9", 1, hash[:]); err != nil {
		t.Fatalf("after JSON: %v (%s)", err, raw)
	}
}

func flip(b []byte) []byte {
	c := append([]byte{}, b...)
	c[len(c)-1] ^= 1
	return c
}
