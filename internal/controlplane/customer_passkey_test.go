package controlplane_test

import (
	"bytes"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
	"countersign/internal/stepup/stepuptest"
	"countersign/store"
)

// customerPasskey registers a software passkey for b's customer of the
// shop, as the customer's page does, and returns it.
func (b *testBundle) customerPasskey(t *testing.T) *stepuptest.Passkey {
	t.Helper()
	key := stepuptest.Unregistered(t)
	b.registerCustomerKey(t, adapter.NormaliseCustomerRef(b.customer.Email), key.Key.ID, key.Key.PublicKey())
	return key
}

func (b *testBundle) registerCustomerKey(t *testing.T, customerRef string, credentialID, publicKey []byte) {
	t.Helper()
	if _, err := b.store.CustomerWebAuthnHandle(b.ctx, "shop", customerRef, []byte(customerRef)); err != nil {
		t.Fatal(err)
	}
	added := store.Event{At: b.clock.Now(), ActorKind: "customer", ActorID: customerRef, Action: string(controlplane.EventCustomerPasskeyAdded), Data: []byte(`{}`)}
	if err := b.store.InsertCustomerPasskey(b.ctx, store.CustomerPasskey{System: "shop", CustomerRef: customerRef, CredentialID: credentialID,
		PublicKey: publicKey, AAGUID: []byte{}, Transports: []string{}, AttestationFormat: "none", Proof: "link", CreatedAt: b.clock.Now()}, 10, added); err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if e, ok := apperr.As(err); !ok || e.Code != code {
		t.Errorf("%s: %v, want %s", what, err, code)
	}
}

// TestTheProofRecordedIsTheProofUsed: the proof "passkey" is recorded only
// beside a verified assertion. A customer proven by a passkey who posts
// the plain confirm or decline (no assertion) is refused — that browser's
// only proof was a signature of another decision — and an assertion
// carried by an actor proven another way is refused; nothing is decided or
// recorded. Stopping the task (which decides nothing) stays open to them.
func TestTheProofRecordedIsTheProofUsed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	a := b.propose(task, "issue_refund", refund(b.order(3).ID, 1, "damaged"), "")
	key := b.customerPasskey(t)
	byKey := controlplane.CustomerProvedOn(b.customer.Email, "passkey", a.ID)
	for _, verb := range []controlplane.CustomerVerb{controlplane.CustomerConfirm, controlplane.CustomerDecline} {
		plain, err := controlplane.CustomerDecision{Actor: byKey, InvocationID: a.ID, Verb: verb}.Showing(a)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.cp.CustomerDecide(b.ctx, plain)
		wantCode(t, string(verb)+" by a passkey's session without its signature", err, "passkey_signature_required")
		signed := plain
		signed.Actor = controlplane.CustomerProvedOn(b.customer.Email, "link", a.ID)
		signed.Passkey = key.AssertChallenge(t, consent.Challenge(a.ID, int64(a.Version), plain.QuoteDigest, string(verb)))
		_, err = b.cp.CustomerDecide(b.ctx, signed)
		wantCode(t, string(verb)+" signed by a passkey from a link's session", err, "passkey_signature_required")
	}
	if got := b.get(a.ID); got.State != controlplane.AwaitingConfirmation {
		t.Fatalf("the request is %s after the refusals", got.State)
	}
	if _, ok, err := b.cp.Consent(b.ctx, a.ID); err != nil || ok {
		t.Fatalf("a consent was recorded: %v %v", ok, err)
	}
	if got, err := b.cp.CustomerDecide(b.ctx, controlplane.CustomerDecision{Actor: byKey, InvocationID: a.ID, Verb: controlplane.CustomerStop}); err != nil || !got.Done {
		t.Fatalf("stop by a passkey's session: %+v %v", got, err)
	}
}

// TestAPasskeyDecisionIsCheckedAgainstTheRegisteredKey: in the decision's
// transaction the assertion's credential is loaded as the customer's
// registered passkey for the request's system and the signature checked
// under the stored public key, not the one the client sent. A key never
// registered, another customer's, one whose stored key is another, one
// removed, or a counter older than the last use is refused; a right one
// is recorded with the stored key, and its counter and last use move.
func TestAPasskeyDecisionIsCheckedAgainstTheRegisteredKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	a := b.propose(task, "issue_refund", refund(b.order(3).ID, 1, "damaged"), "")
	byKey := controlplane.CustomerProvedOn(b.customer.Email, "passkey", a.ID)
	plain, err := controlplane.CustomerDecision{Actor: byKey, InvocationID: a.ID, Verb: controlplane.CustomerDecline}.Showing(a)
	if err != nil {
		t.Fatal(err)
	}
	challenge := consent.Challenge(a.ID, int64(a.Version), plain.QuoteDigest, consent.Decline)
	signedBy := func(k *stepuptest.Passkey) controlplane.CustomerDecision {
		d := plain
		d.Passkey = k.AssertChallenge(t, challenge)
		return d
	}

	_, err = b.cp.CustomerDecide(b.ctx, signedBy(stepuptest.Unregistered(t)))
	wantCode(t, "a passkey never registered", err, "passkey_not_yours")
	someoneElses := stepuptest.Unregistered(t)
	b.registerCustomerKey(t, "someone-else@example.test", someoneElses.Key.ID, someoneElses.Key.PublicKey())
	_, err = b.cp.CustomerDecide(b.ctx, signedBy(someoneElses))
	wantCode(t, "another customer's passkey", err, "passkey_not_yours")
	// The credential id registered, under another public key: the key
	// the client sends is not the one checked.
	swapped := stepuptest.Unregistered(t)
	b.registerCustomerKey(t, adapter.NormaliseCustomerRef(b.customer.Email), swapped.Key.ID, stepuptest.Unregistered(t).Key.PublicKey())
	_, err = b.cp.CustomerDecide(b.ctx, signedBy(swapped))
	wantCode(t, "a signature under a key other than the registered one", err, "passkey_not_for_this_decision")

	key := b.customerPasskey(t)
	key.Key.Count = 5
	_ = key.AssertChallenge(t, challenge)
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE customer_passkeys SET sign_count = 9 WHERE credential_id = $1`, key.Key.ID); err != nil {
		t.Fatal(err)
	}
	_, err = b.cp.CustomerDecide(b.ctx, signedBy(key))
	wantCode(t, "a counter older than the passkey's last use", err, "passkey_not_for_this_decision")

	removed := b.customerPasskey(t)
	if _, err := b.store.Pool().Exec(b.ctx, `DELETE FROM customer_passkeys WHERE credential_id = $1`, removed.Key.ID); err != nil {
		t.Fatal(err)
	}
	_, err = b.cp.CustomerDecide(b.ctx, signedBy(removed))
	wantCode(t, "a removed passkey", err, "passkey_not_yours")
	if _, ok, err := b.cp.Consent(b.ctx, a.ID); err != nil || ok {
		t.Fatalf("a consent after the refusals: %v %v", ok, err)
	}

	key.Key.Count = 12
	d := signedBy(key)
	d.Passkey.PublicKey = []byte("what the client says its key is")
	if got, err := b.cp.CustomerDecide(b.ctx, d); err != nil || !got.Done {
		t.Fatalf("the decline signed by the customer's passkey: %+v %v", got, err)
	}
	c, ok, err := b.cp.Consent(b.ctx, a.ID)
	if err != nil || !ok || c.Passkey == nil || !bytes.Equal(c.Passkey.PublicKey, key.Key.PublicKey()) || c.Verify(a.ID, c.Quote) != nil {
		t.Fatalf("the consent does not carry the registered key: %+v %v %v", c, ok, err)
	}
	var count int64
	var used bool
	if err := b.store.Pool().QueryRow(b.ctx, `SELECT sign_count, last_used_at IS NOT NULL FROM customer_passkeys WHERE credential_id = $1`,
		key.Key.ID).Scan(&count, &used); err != nil || count != 12 || !used {
		t.Fatalf("after the decision the passkey counts %d, used %v (%v), want 12 and used", count, used, err)
	}
}
