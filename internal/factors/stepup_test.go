package factors

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/factors/softkey"
	"countersign/internal/stepup"
)

var (
	argsHash  = sha256.Sum256([]byte(`{"amount":"180.00","order_id":"1042"}`))
	otherHash = sha256.Sum256([]byte(`{"amount":"1800.00","order_id":"1042"}`))
)

// stepUp begins a step-up of u for (id, version, hash) and answers it
// with k at originOf; it returns the ceremony's id and the answer.
func (b *bundle) stepUp(t *testing.T, u accounts.User, k *softkey.Key, id string, version int64, hash []byte, originOf string) (string, []byte) {
	t.Helper()
	c, err := b.svc.BeginStepUp(t.Context(), u, id, version, hash)
	if err != nil {
		t.Fatal(err)
	}
	body, err := k.Get(c.Options, rpID, originOf)
	if err != nil {
		t.Fatal(err)
	}
	return c.ID, body
}

// TestStepUpAssertionIsEvidenceOfTheApproval: the options carry the
// approval's challenge, only the person's passkeys and user verification
// required; the assertion returned verifies offline for that approval
// and carries the passkey's registered public key.
func TestStepUpAssertionIsEvidenceOfTheApproval(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	k := b.register(t, b.agent, "Laptop")
	b.register(t, b.admin, "Admin's key")
	c, err := b.svc.BeginStepUp(ctx, b.agent, "inv_1", 3, argsHash[:])
	if err != nil {
		t.Fatal(err)
	}
	var opts struct {
		PublicKey struct {
			Challenge        stepup.Bytes `json:"challenge"`
			UserVerification string       `json:"userVerification"`
			AllowCredentials []struct {
				ID stepup.Bytes `json:"id"`
			} `json:"allowCredentials"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(c.Options, &opts); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(opts.PublicKey.Challenge, stepup.Challenge("inv_1", 3, argsHash[:])) {
		t.Fatalf("the challenge is not the approval's: %x", opts.PublicKey.Challenge)
	}
	if opts.PublicKey.UserVerification != "required" {
		t.Fatalf("user verification %q, want required", opts.PublicKey.UserVerification)
	}
	if len(opts.PublicKey.AllowCredentials) != 1 || !bytes.Equal(opts.PublicKey.AllowCredentials[0].ID, k.ID) {
		t.Fatalf("allowed credentials %+v, want only the agent's passkey", opts.PublicKey.AllowCredentials)
	}
	body, _ := k.Get(c.Options, rpID, origin)
	a, err := b.svc.FinishStepUp(ctx, b.agent, c.ID, body, "inv_1", 3, argsHash[:])
	if err != nil {
		t.Fatalf("the step-up for the approval it was begun for: %v", err)
	}
	if err := a.Verify("inv_1", 3, argsHash[:]); err != nil {
		t.Fatalf("the assertion does not verify offline: %v", err)
	}
	keys, _ := b.svc.Passkeys(ctx, b.agent.ID)
	// The key as stored (the library keeps its own encoding of the COSE
	// key the authenticator sent).
	if !bytes.Equal(a.PublicKey, keys[0].PublicKey) || !bytes.Equal(a.CredentialID, k.ID) || a.RPID != rpID || a.Origin != origin {
		t.Fatalf("assertion %+v: not the passkey's stored key, id, rp or origin", a)
	}
	if keys[0].SignCount != 1 || keys[0].LastUsedAt == nil {
		t.Fatalf("the step-up did not count as a use of the passkey: %+v", keys[0])
	}
}

// TestStepUpForAnotherCardOrVersionRefused: the caller's triple (the card
// as loaded now) must be the one the ceremony was begun for, and an
// answer made for one card's ceremony is worthless for another's.
func TestStepUpForAnotherCardOrVersionRefused(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	k := b.register(t, b.agent, "Laptop")
	for name, finish := range map[string]func(id string, body []byte) error{
		"another card": func(id string, body []byte) error {
			_, err := b.svc.FinishStepUp(ctx, b.agent, id, body, "inv_2", 3, argsHash[:])
			return err
		},
		"another version": func(id string, body []byte) error {
			_, err := b.svc.FinishStepUp(ctx, b.agent, id, body, "inv_1", 4, argsHash[:])
			return err
		},
		"other arguments": func(id string, body []byte) error {
			_, err := b.svc.FinishStepUp(ctx, b.agent, id, body, "inv_1", 3, otherHash[:])
			return err
		},
	} {
		id, body := b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
		if err := finish(id, body); !errors.Is(err, ErrStepUpRefused) {
			t.Errorf("%s: %v, want ErrStepUpRefused", name, err)
		}
	}
	// The answer to card 1's ceremony, sent with card 2's ceremony.
	_, forOne := b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
	two, err := b.svc.BeginStepUp(ctx, b.agent, "inv_2", 3, argsHash[:])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.FinishStepUp(ctx, b.agent, two.ID, forOne, "inv_2", 3, argsHash[:]); !errors.Is(err, ErrStepUpRefused) {
		t.Fatalf("an answer made for another card's ceremony: %v, want ErrStepUpRefused", err)
	}
	id, body := b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
	if _, err := b.svc.FinishStepUp(ctx, b.agent, id, body, "inv_1", 3, argsHash[:]); err != nil {
		t.Fatalf("the right card after the refusals: %v", err)
	}
}

// TestStepUpFromAnotherOriginRefused: the client data must name the
// console's own origin.
func TestStepUpFromAnotherOriginRefused(t *testing.T) {
	b := withPasskeys(t)
	k := b.register(t, b.agent, "Laptop")
	for _, other := range []string{"https://evil.example", "http://console.example.test", "https://console.example.test:8443"} {
		id, body := b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], other)
		if _, err := b.svc.FinishStepUp(t.Context(), b.agent, id, body, "inv_1", 3, argsHash[:]); !errors.Is(err, ErrStepUpRefused) {
			t.Errorf("a step-up made at %s: %v, want ErrStepUpRefused", other, err)
		}
	}
}

// TestStepUpCeremonyIsSingleUseAndShortLived: a step-up ceremony is
// answered once, within five minutes, and never stands for a sign-in's
// (nor a sign-in's for it).
func TestStepUpCeremonyIsSingleUseAndShortLived(t *testing.T) {
	b := withPasskeys(t)
	ctx := t.Context()
	k := b.register(t, b.agent, "Laptop")
	id, body := b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
	if _, err := b.svc.FinishStepUp(ctx, b.agent, id, body, "inv_1", 3, argsHash[:]); err != nil {
		t.Fatal(err)
	}
	k.Count += 5
	if _, err := b.svc.FinishStepUp(ctx, b.agent, id, body, "inv_1", 3, argsHash[:]); !errors.Is(err, ErrStepUpRefused) {
		t.Fatalf("a step-up answered twice: %v, want ErrStepUpRefused", err)
	}
	id, body = b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
	b.clock.Advance(CeremonyLife)
	if _, err := b.svc.FinishStepUp(ctx, b.agent, id, body, "inv_1", 3, argsHash[:]); !errors.Is(err, ErrStepUpRefused) {
		t.Fatalf("a step-up after five minutes: %v, want ErrStepUpRefused", err)
	}
	signIn, _ := b.svc.BeginPasskeySignIn(ctx, b.agent)
	body, _ = k.Get(signIn.Options, rpID, origin)
	if _, err := b.svc.FinishStepUp(ctx, b.agent, signIn.ID, body, "inv_1", 3, argsHash[:]); !errors.Is(err, ErrStepUpRefused) {
		t.Fatalf("a sign-in ceremony answered as a step-up: %v, want ErrStepUpRefused", err)
	}
	id, body = b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
	if err := b.svc.FinishPasskeySignIn(ctx, b.agent, id, body, "192.0.2.1"); !errors.Is(err, ErrPasskeyRefused) {
		t.Fatalf("a step-up ceremony answered as a sign-in: %v, want ErrPasskeyRefused", err)
	}
	b.register(t, b.admin, "Admin's key")
	id, body = b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
	if _, err := b.svc.FinishStepUp(ctx, b.admin, id, body, "inv_1", 3, argsHash[:]); !errors.Is(err, ErrStepUpRefused) {
		t.Fatalf("another person's step-up ceremony: %v, want ErrStepUpRefused", err)
	}
}

// TestStepUpNeedsUserVerification: a passkey that only shows the person
// was present (no PIN, no biometric) does not make a step-up.
func TestStepUpNeedsUserVerification(t *testing.T) {
	b := withPasskeys(t)
	k := b.register(t, b.agent, "Plain key")
	k.NoUserVerification = true
	id, body := b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
	if _, err := b.svc.FinishStepUp(t.Context(), b.agent, id, body, "inv_1", 3, argsHash[:]); !errors.Is(err, ErrStepUpRefused) {
		t.Fatalf("an assertion without user verification: %v, want ErrStepUpRefused", err)
	}
}

// TestStepUpSignCountRegressionRefused: as at sign-in, an assertion whose
// counter went back is refused (a cloned authenticator).
func TestStepUpSignCountRegressionRefused(t *testing.T) {
	b := withPasskeys(t)
	k := b.register(t, b.agent, "Key")
	k.Count = 7
	id, body := b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
	if _, err := b.svc.FinishStepUp(t.Context(), b.agent, id, body, "inv_1", 3, argsHash[:]); err != nil {
		t.Fatal(err)
	}
	k.Count = 7
	id, body = b.stepUp(t, b.agent, k, "inv_1", 3, argsHash[:], origin)
	if _, err := b.svc.FinishStepUp(t.Context(), b.agent, id, body, "inv_1", 3, argsHash[:]); !errors.Is(err, ErrStepUpRefused) {
		t.Fatalf("a counter that did not grow: %v, want ErrStepUpRefused", err)
	}
}

// TestStepUpWithoutAPasskeySaysHowToAddOne: a person with no passkey is
// told to add one on the account page.
func TestStepUpWithoutAPasskeySaysHowToAddOne(t *testing.T) {
	b := withPasskeys(t)
	_, err := b.svc.BeginStepUp(t.Context(), b.agent, "inv_1", 3, argsHash[:])
	if e, ok := apperr.As(err); !ok || e.Code != "no_passkey" || e.Hint == "" {
		t.Fatalf("a step-up without a passkey: %v, want no_passkey with a hint", err)
	}
}
