package consent_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"countersign/internal/consent"
	"countersign/internal/factors/softkey"
	"countersign/internal/stepup"
)

func TestQuoteDigestIsTheQuotesWhateverItsSpelling(t *testing.T) {
	a, err := consent.QuoteDigest(json.RawMessage(`{"lines":[{"label":"Refund","to":"180.00"}],"amount":18000}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := consent.QuoteDigest(json.RawMessage(`{ "amount": 18000, "lines": [ { "to": "180.00", "label": "Refund" } ] }`))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("one quote spelt two ways has two digests")
	}
	c, _ := consent.QuoteDigest(json.RawMessage(`{"lines":[{"label":"Refund","to":"1800.00"}],"amount":18000}`))
	if bytes.Equal(a, c) {
		t.Fatal("two quotes share a digest")
	}
	big, _ := consent.Canonical(json.RawMessage(`{"n":12345678901234567890}`))
	if string(big) != `{"n":12345678901234567890}` {
		t.Fatalf("a number was rewritten: %s", big)
	}
	if _, err := consent.QuoteDigest(json.RawMessage(`{"a":1} {"b":2}`)); err == nil {
		t.Fatal("two JSON values digested as one quote")
	}
}

func TestAPasskeySignsOneDecisionOnOneQuote(t *testing.T) {
	const rpID, origin = "shop.example", "https://shop.example"
	b64 := base64.RawURLEncoding
	reg, _ := json.Marshal(map[string]any{"publicKey": map[string]any{"challenge": b64.EncodeToString([]byte("r")),
		"user": map[string]any{"id": b64.EncodeToString([]byte("c1"))}}})
	key, _, err := softkey.Create(reg, rpID, origin)
	if err != nil {
		t.Fatal(err)
	}
	quote := json.RawMessage(`{"lines":[{"label":"Refund","to":"180.00"}]}`)
	digest, _ := consent.QuoteDigest(quote)
	opts, _ := json.Marshal(map[string]any{"publicKey": map[string]any{"challenge": b64.EncodeToString(consent.Challenge("inv_1", 2, digest, consent.Confirm))}})
	body, err := key.Get(opts, rpID, origin)
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
	e := consent.Evidence{Proof: "passkey", Decision: consent.Confirm, QuoteVersion: 2, QuoteDigest: digest,
		Passkey: &stepup.Assertion{CredentialID: r.RawID, PublicKey: key.PublicKey(), RPID: rpID, Origin: origin,
			AuthenticatorData: r.Response.AuthenticatorData, ClientDataJSON: r.Response.ClientDataJSON, Signature: r.Response.Signature}}
	if err := e.Verify("inv_1", quote); err != nil {
		t.Fatalf("the decision it was made for: %v", err)
	}
	for name, check := range map[string]func() error{
		"another request": func() error { return e.Verify("inv_2", quote) },
		"another quote": func() error {
			return e.Verify("inv_1", json.RawMessage(`{"lines":[{"label":"Refund","to":"1800.00"}]}`))
		},
		"another version": func() error { f := e; f.QuoteVersion = 3; return f.Verify("inv_1", quote) },
		"the other decision": func() error {
			f := e
			f.Decision = consent.Decline
			return f.Verify("inv_1", quote)
		},
		"the proof passkey without its assertion": func() error { f := e; f.Passkey = nil; return f.Verify("inv_1", quote) },
		"an assertion under the proof link":       func() error { f := e; f.Proof = "link"; return f.Verify("inv_1", quote) },
	} {
		if err := check(); !errors.Is(err, stepup.ErrInvalid) {
			t.Errorf("%s: %v, want stepup.ErrInvalid", name, err)
		}
	}
}
