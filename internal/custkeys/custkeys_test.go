package custkeys_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/clocktest"
	"countersign/internal/consent"
	"countersign/internal/custkeys"
	"countersign/internal/factors/softkey"
	"countersign/internal/racetest"
	"countersign/internal/stepup"
	"countersign/store"
	"countersign/store/dbtest"
)

const (
	rpID   = "console.example.test"
	origin = "https://console.example.test"
)

var (
	jordan = custkeys.Customer{System: "shop", Ref: "jordan@example.test"}
	quote  = json.RawMessage(`{"title":"Refund $42.10","amount_cents":4210}`)
)

type bundle struct {
	svc   *custkeys.Service
	clock *clocktest.Clock
}

func setup(t *testing.T) *bundle {
	t.Helper()
	clock := clocktest.New(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
	svc, err := custkeys.New(store.New(dbtest.New(t)), custkeys.Config{PublicURL: origin + "/", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{svc: svc, clock: clock}
}

// register adds a passkey for c after a decision proven by proof.
func (b *bundle) register(t *testing.T, c custkeys.Customer, proof string) *softkey.Key {
	t.Helper()
	cer, err := b.svc.BeginRegistration(t.Context(), c, "inv_1", proof)
	if err != nil {
		t.Fatal(err)
	}
	k, body, err := softkey.Create(cer.Options, rpID, origin)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.svc.FinishRegistration(t.Context(), custkeys.Registration{C: c, InvocationID: "inv_1", Proof: proof}, cer.ID, body); err != nil {
		t.Fatal(err)
	}
	return k
}

func decision(t *testing.T, id string, version int64, q json.RawMessage, verb string) custkeys.Decision {
	t.Helper()
	digest, err := consent.QuoteDigest(q)
	if err != nil {
		t.Fatal(err)
	}
	return custkeys.Decision{InvocationID: id, QuoteVersion: version, QuoteDigest: digest, Decision: verb}
}

// answer begins c's decision d and answers it with k at originOf.
func (b *bundle) answer(t *testing.T, c custkeys.Customer, k *softkey.Key, d custkeys.Decision, originOf string) (string, []byte) {
	t.Helper()
	cer, err := b.svc.BeginDecision(t.Context(), c, d)
	if err != nil {
		t.Fatal(err)
	}
	body, err := k.Get(cer.Options, rpID, originOf)
	if err != nil {
		t.Fatal(err)
	}
	return cer.ID, body
}

func refused(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, custkeys.ErrRefused) {
		t.Fatalf("%s: got %v, want passkey_refused", what, err)
	}
}

// TestARegistrationNeedsAProofACodeIsNot: a passkey is added after the
// mail's link, the business's assertion or the customer's account, and
// never from a session proven by a typed code — neither its beginning nor
// its finish (the session's proof could change between the two).
func TestARegistrationNeedsAProofACodeIsNot(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	for _, proof := range []string{"link", "assertion", "account"} {
		c := custkeys.Customer{System: "shop", Ref: proof + "@example.test"}
		b.register(t, c, proof)
		if has, err := b.svc.Has(ctx, c); err != nil || !has {
			t.Fatalf("after a registration proven by %s: has a passkey %v, %v", proof, has, err)
		}
	}
	for _, proof := range []string{"code", "", "passkey"} {
		_, err := b.svc.BeginRegistration(ctx, jordan, "inv_1", proof)
		if e, ok := apperr.As(err); !ok || e.Code != "passkey_needs_stronger_proof" {
			t.Fatalf("a registration begun from a session proven by %q: %v, want passkey_needs_stronger_proof", proof, err)
		}
	}
	cer, err := b.svc.BeginRegistration(ctx, jordan, "inv_1", "link")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := softkey.Create(cer.Options, rpID, origin)
	if err := b.svc.FinishRegistration(ctx, custkeys.Registration{C: jordan, InvocationID: "inv_1", Proof: "code"}, cer.ID, body); !errors.Is(err, custkeys.ErrNotFromACode) {
		t.Fatalf("a registration finished from a code's session: %v", err)
	}
	if has, _ := b.svc.Has(ctx, jordan); has {
		t.Fatal("a code's session added a passkey")
	}
}

// TestADecisionsAssertionIsEvidenceOfThatDecision: the options carry the
// decision's challenge, only the customer's passkeys for this system and
// user verification required; the assertion returned verifies offline
// (consent.Evidence.Verify) against the quote shown.
func TestADecisionsAssertionIsEvidenceOfThatDecision(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	k := b.register(t, jordan, "link")
	b.register(t, custkeys.Customer{System: "other-shop", Ref: jordan.Ref}, "link")
	d := decision(t, "inv_7", 3, quote, consent.Confirm)
	cer, err := b.svc.BeginDecision(ctx, jordan, d)
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
	if err := json.Unmarshal(cer.Options, &opts); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(opts.PublicKey.Challenge, consent.Challenge("inv_7", 3, d.QuoteDigest, consent.Confirm)) {
		t.Fatalf("the challenge is not the decision's: %x", opts.PublicKey.Challenge)
	}
	if opts.PublicKey.UserVerification != "required" {
		t.Fatalf("user verification %q, want required", opts.PublicKey.UserVerification)
	}
	if len(opts.PublicKey.AllowCredentials) != 1 || !bytes.Equal(opts.PublicKey.AllowCredentials[0].ID, k.ID) {
		t.Fatalf("allowed credentials %+v, want only this customer's passkey for this shop", opts.PublicKey.AllowCredentials)
	}
	body, _ := k.Get(cer.Options, rpID, origin)
	a, err := b.svc.FinishDecision(ctx, jordan, cer.ID, body, d)
	if err != nil {
		t.Fatalf("the decision it was begun for: %v", err)
	}
	ev := consent.Evidence{Proof: "passkey", Decision: consent.Confirm, QuoteVersion: 3, QuoteDigest: d.QuoteDigest, Passkey: &a}
	if err := ev.Verify("inv_7", quote); err != nil {
		t.Fatalf("the evidence does not verify offline: %v", err)
	}
	ev.Decision = consent.Decline
	if err := ev.Verify("inv_7", quote); err == nil {
		t.Fatal("the confirm's assertion verifies as a decline")
	}
}

// TestAnAssertionForAnotherRequestVersionOrDecisionIsRefused: the finish
// recomputes the challenge from the request as loaded now and the
// decision posted; an answer made for anything else is refused, and so is
// one begun by another customer or shop.
func TestAnAssertionForAnotherRequestVersionOrDecisionIsRefused(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	k := b.register(t, jordan, "account")
	d := decision(t, "inv_7", 3, quote, consent.Confirm)
	requoted := decision(t, "inv_7", 3, json.RawMessage(`{"title":"Refund $4210.00","amount_cents":421000}`), consent.Confirm)
	for name, now := range map[string]custkeys.Decision{
		"another request":  decision(t, "inv_8", 3, quote, consent.Confirm),
		"another version":  decision(t, "inv_7", 4, quote, consent.Confirm),
		"another quote":    requoted,
		"another decision": decision(t, "inv_7", 3, quote, consent.Decline),
	} {
		id, body := b.answer(t, jordan, k, d, origin)
		_, err := b.svc.FinishDecision(ctx, jordan, id, body, now)
		refused(t, err, name)
	}
	id, body := b.answer(t, jordan, k, d, origin)
	_, err := b.svc.FinishDecision(ctx, custkeys.Customer{System: "other-shop", Ref: jordan.Ref}, id, body, d)
	refused(t, err, "another shop's customer")
	id, body = b.answer(t, jordan, k, d, origin)
	if _, err := b.svc.FinishDecision(ctx, jordan, id, body, d); err != nil {
		t.Fatalf("the right answer after the refusals: %v", err)
	}
}

// TestADecisionFromAnotherOriginIsRefused: client data naming another
// origin (another host, port or scheme) is refused.
func TestADecisionFromAnotherOriginIsRefused(t *testing.T) {
	b := setup(t)
	k := b.register(t, jordan, "link")
	d := decision(t, "inv_7", 3, quote, consent.Decline)
	for _, o := range []string{"https://evil.example.test", "https://console.example.test:8443", "http://console.example.test"} {
		id, body := b.answer(t, jordan, k, d, o)
		_, err := b.svc.FinishDecision(t.Context(), jordan, id, body, d)
		refused(t, err, o)
	}
}

// TestADecisionCeremonyIsSingleUseAndShortLived: an answer works once;
// the same answer again, or one after five minutes, is refused; so is a
// counter that did not grow and an authenticator that did not verify the
// person.
func TestADecisionCeremonyIsSingleUseAndShortLived(t *testing.T) {
	b := setup(t)
	ctx := t.Context()
	k := b.register(t, jordan, "link")
	d := decision(t, "inv_7", 3, quote, consent.Confirm)
	id, body := b.answer(t, jordan, k, d, origin)
	if _, err := b.svc.FinishDecision(ctx, jordan, id, body, d); err != nil {
		t.Fatal(err)
	}
	_, err := b.svc.FinishDecision(ctx, jordan, id, body, d)
	refused(t, err, "the same answer twice")

	id, body = b.answer(t, jordan, k, d, origin)
	b.clock.Advance(5*time.Minute + time.Second)
	_, err = b.svc.FinishDecision(ctx, jordan, id, body, d)
	refused(t, err, "an answer after five minutes")

	k.Count = 1 // behind the count the last use recorded
	id, body = b.answer(t, jordan, k, d, origin)
	_, err = b.svc.FinishDecision(ctx, jordan, id, body, d)
	refused(t, err, "a counter that did not grow")

	k.Count, k.NoUserVerification = 100, true
	id, body = b.answer(t, jordan, k, d, origin)
	_, err = b.svc.FinishDecision(ctx, jordan, id, body, d)
	refused(t, err, "no user verification")
}

// TestADecisionWithoutAPasskeySaysSo: a customer with no passkey for this
// shop is told so, and passkeys are off without a public URL.
func TestADecisionWithoutAPasskeySaysSo(t *testing.T) {
	b := setup(t)
	_, err := b.svc.BeginDecision(t.Context(), jordan, decision(t, "inv_7", 3, quote, consent.Confirm))
	if !errors.Is(err, custkeys.ErrNoPasskey) {
		t.Fatalf("no passkey: %v", err)
	}
	off, err := custkeys.New(nil, custkeys.Config{})
	if err != nil || off.On() {
		t.Fatalf("without a public URL: on %v, %v", off.On(), err)
	}
	if _, err := custkeys.New(nil, custkeys.Config{PublicURL: "http://127.0.0.1:8080"}); err == nil {
		t.Fatal("an IP address as the relying party was taken")
	}
}

// TestOneCountRacedTwiceOneWins: two answers carrying the same signature
// counter (a cloned authenticator, or one answer's bytes sent twice with
// two ceremonies) both verify, are held until both have, then race to
// record the count against real PostgreSQL: the one UPDATE lets one
// through and refuses the other.
func TestOneCountRacedTwiceOneWins(t *testing.T) {
	b := setup(t)
	k := b.register(t, jordan, "link")
	d := decision(t, "inv_7", 3, quote, consent.Confirm)
	for round := range 3 {
		ids, bodies := make([]string, 2), make([][]byte, 2)
		count := k.Count
		for i := range 2 {
			k.Count = count
			ids[i], bodies[i] = b.answer(t, jordan, k, d, origin)
		}
		var arrived sync.WaitGroup
		arrived.Add(2)
		b.svc.HoldBeforeUse(func() { arrived.Done(); arrived.Wait() })
		errs := racetest.Run(2, func(i int) error {
			_, err := b.svc.FinishDecision(context.Background(), jordan, ids[i], bodies[i], d)
			return err
		})
		b.svc.HoldBeforeUse(nil)
		ok, refusedN := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, custkeys.ErrRefused):
				refusedN++
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if ok != 1 || refusedN != 1 {
			t.Fatalf("round %d: %d accepted and %d refused, want 1 and 1", round, ok, refusedN)
		}
	}
}
