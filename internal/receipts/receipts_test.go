package receipts_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"countersign/internal/receipts"
)

// RFC 8037, Appendix A: the Ed25519 key, its JWK thumbprint, and the JWS
// of "Example of Ed25519 signing" under {"alg":"EdDSA"}.
const (
	rfcSeed  = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
	rfcX     = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
	rfcKid   = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
	rfcJWS   = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"
	rfcPlain = "Example of Ed25519 signing"
)

func rfcSigner(t *testing.T) (*receipts.Signer, ed25519.PublicKey) {
	t.Helper()
	seed, _ := base64.RawURLEncoding.DecodeString(rfcSeed)
	s, err := receipts.NewSigner(seed)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := base64.RawURLEncoding.DecodeString(rfcX)
	return s, ed25519.PublicKey(x)
}

func TestKeysMatchRFC8037(t *testing.T) {
	t.Parallel()
	s, pub := rfcSigner(t)
	key := s.JWKS()["keys"].([]any)[0].(map[string]any)
	if key["x"] != rfcX || key["kid"] != rfcKid || s.KeyID() != rfcKid || key["kty"] != "OKP" || key["crv"] != "Ed25519" {
		t.Errorf("JWK %v, want x %s and the RFC's thumbprint %s", key, rfcX, rfcKid)
	}
	// The RFC's JWS is signed by this key, but it is no receipt: its
	// header has no typ, its payload is text.
	parts := strings.Split(rfcJWS, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	if !ed25519.Verify(pub, []byte(parts[0]+"."+parts[1]), sig) {
		t.Error("the RFC's signature does not hold for its key")
	}
	if _, err := receipts.Verify(rfcJWS, pub); !errors.Is(err, receipts.ErrInvalid) {
		t.Errorf("Verify(the RFC's JWS) = %v, want ErrInvalid", err)
	}
}

// TestAReceiptNeedsItsTypeAndAThumbprintKid: a JWS signed by the key with
// another typ is not a receipt, and a key set naming the key by anything
// but its RFC 7638 thumbprint is refused.
func TestAReceiptNeedsItsTypeAndAThumbprintKid(t *testing.T) {
	t.Parallel()
	seed, _ := base64.RawURLEncoding.DecodeString(rfcSeed)
	key := ed25519.NewKeyFromSeed(seed)
	b64 := base64.RawURLEncoding.EncodeToString
	sign := func(header string) string {
		in := b64([]byte(header)) + "." + b64([]byte(`{"sub":"inv_1"}`))
		return in + "." + b64(ed25519.Sign(key, []byte(in)))
	}
	set := func(kid string) []byte {
		return []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"` + kid + `","x":"` + rfcX + `"}]}`)
	}
	if _, _, err := receipts.VerifyWithKeys(sign(`{"alg":"EdDSA","typ":"JWT","kid":"`+rfcKid+`"}`), set(rfcKid)); !errors.Is(err, receipts.ErrType) {
		t.Errorf("typ JWT: %v, want ErrType", err)
	}
	if _, _, err := receipts.VerifyWithKeys(sign(`{"alg":"EdDSA","typ":"`+receipts.Type+`","kid":"k1"}`), set("k1")); !errors.Is(err, receipts.ErrKeyID) {
		t.Errorf("kid k1: %v, want ErrKeyID", err)
	}
	if _, _, err := receipts.VerifyWithKeys(sign(`{"alg":"EdDSA","typ":"`+receipts.Type+`","kid":"`+rfcKid+`"}`), set(rfcKid)); err != nil {
		t.Errorf("a receipt: %v", err)
	}
}

func TestSignedReceiptsVerifyAndTamperingShows(t *testing.T) {
	t.Parallel()
	s, pub := rfcSigner(t)
	jws, err := s.Sign(map[string]any{"sub": "inv_1", "result": map[string]string{"reference": "re_1"}})
	if err != nil {
		t.Fatal(err)
	}
	header, _ := base64.RawURLEncoding.DecodeString(strings.Split(jws, ".")[0])
	var h map[string]string
	_ = json.Unmarshal(header, &h)
	if h["alg"] != "EdDSA" || h["kid"] != rfcKid || h["typ"] != receipts.Type {
		t.Errorf("header %s", header)
	}
	claims, err := receipts.Verify(jws, pub)
	if err != nil || !strings.Contains(string(claims), `"reference":"re_1"`) {
		t.Fatalf("Verify = %s, %v", claims, err)
	}
	parts := strings.Split(jws, ".")
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"inv_1","result":{"reference":"re_2"}}`)) + "." + parts[2]
	other := receipts.Ephemeral()
	otherJWS, _ := other.Sign(map[string]any{"sub": "inv_1"})
	for name, bad := range map[string]string{"changed claims": forged, "another key": otherJWS, "two parts": parts[0] + "." + parts[1], "not base64": "a.b.!"} {
		if _, err := receipts.Verify(bad, pub); !errors.Is(err, receipts.ErrInvalid) {
			t.Errorf("%s: Verify = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := receipts.NewSigner([]byte("short")); err == nil {
		t.Error("a 5-byte seed makes a signer")
	}
}
