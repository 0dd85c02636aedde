package controlplane_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/consent"
	"countersign/internal/controlplane"
)

// TestACustomerDecidesOnlyTheQuoteTheyWereShown: a confirmation or a
// decline that names no quote, another version or another quote's digest
// is refused (409 quote_changed) and leaves the request as it was; a
// passkey assertion that is not evidence of this decision on this quote
// is refused; a decision on the quote shown records, in its transaction,
// the consent: proof kind, decision, version, digest, the quote and the
// hash of the arguments it was made from, and the passkey's assertion.
func TestACustomerDecidesOnlyTheQuoteTheyWereShown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	a := b.propose(task, "issue_refund", refund(b.order(3).ID, 1, "damaged"), "")
	other := b.propose(task, "issue_refund", refund(b.order(3).ID, 2, "damaged"), "")
	onA := controlplane.CustomerProvedOn(b.customer.Email, "code", a.ID)
	shown, err := controlplane.CustomerDecision{Actor: onA, InvocationID: a.ID}.Showing(a)
	if err != nil {
		t.Fatal(err)
	}
	otherDigest, _ := consent.QuoteDigest(other.QuoteJSON)
	for _, verb := range []controlplane.CustomerVerb{controlplane.CustomerConfirm, controlplane.CustomerDecline} {
		for name, d := range map[string]controlplane.CustomerDecision{
			"no quote named":     {Actor: onA, InvocationID: a.ID, Verb: verb},
			"an earlier version": {Actor: onA, InvocationID: a.ID, Verb: verb, QuoteVersion: a.Version - 1, QuoteDigest: shown.QuoteDigest},
			"another quote":      {Actor: onA, InvocationID: a.ID, Verb: verb, QuoteVersion: a.Version, QuoteDigest: otherDigest},
			"the digest with one bit changed": {Actor: onA, InvocationID: a.ID, Verb: verb, QuoteVersion: a.Version,
				QuoteDigest: append([]byte{shown.QuoteDigest[0] ^ 1}, shown.QuoteDigest[1:]...)},
		} {
			_, err := b.cp.CustomerDecide(b.ctx, d)
			if e, ok := apperr.As(err); !ok || e.Kind != apperr.Conflict || e.Code != "quote_changed" {
				t.Errorf("%s with %s: %v, want 409 quote_changed", verb, name, err)
			}
		}
	}
	if got := b.get(a.ID); got.State != controlplane.AwaitingConfirmation || got.Version != a.Version {
		t.Fatalf("after the refused decisions: %s v%d, want untouched", got.State, got.Version)
	}

	// A passkey's signature on the decline is no confirmation, and a
	// signature on another request's quote is no decline of this one.
	key := b.customerPasskey(t)
	byKey := controlplane.CustomerProvedOn(b.customer.Email, "passkey", a.ID)
	declineA := key.AssertChallenge(t, consent.Challenge(a.ID, int64(a.Version), shown.QuoteDigest, consent.Decline))
	for name, d := range map[string]controlplane.CustomerDecision{
		"a confirmation signed as a decline": {Actor: byKey, InvocationID: a.ID, Verb: controlplane.CustomerConfirm,
			QuoteVersion: a.Version, QuoteDigest: shown.QuoteDigest, Passkey: declineA},
		"a decline signed for another request's quote": {Actor: byKey, InvocationID: a.ID, Verb: controlplane.CustomerDecline,
			QuoteVersion: a.Version, QuoteDigest: shown.QuoteDigest, Passkey: key.AssertChallenge(t, consent.Challenge(other.ID, int64(other.Version), otherDigest, consent.Decline))},
	} {
		_, err := b.cp.CustomerDecide(b.ctx, d)
		if e, ok := apperr.As(err); !ok || e.Kind != apperr.Forbidden || e.Code != "passkey_not_for_this_decision" {
			t.Errorf("%s: %v, want passkey_not_for_this_decision", name, err)
		}
	}
	if _, ok, err := b.cp.Consent(b.ctx, a.ID); err != nil || ok {
		t.Fatalf("a consent after refused decisions: %v, %v", ok, err)
	}

	d := shown
	d.Actor, d.Verb, d.Passkey = byKey, controlplane.CustomerDecline, declineA
	if got, err := b.cp.CustomerDecide(b.ctx, d); err != nil || !got.Done {
		t.Fatalf("the decline on the quote shown, signed for it: %+v, %v", got, err)
	}
	c, ok, err := b.cp.Consent(b.ctx, a.ID)
	if err != nil || !ok {
		t.Fatalf("the decline's consent: %v, %v", ok, err)
	}
	if c.Proof != "passkey" || c.Decision != consent.Decline || c.QuoteVersion != int64(a.Version) || !bytes.Equal(c.QuoteDigest, shown.QuoteDigest) ||
		!bytes.Equal(c.ArgsHash, a.ArgsHash) || c.Customer != b.customer.Email || c.Passkey == nil {
		t.Fatalf("the decline's consent: %+v", c)
	}
	if err := c.Verify(a.ID, c.Quote); err != nil {
		t.Fatalf("the recorded evidence against the recorded quote: %v", err)
	}

	onOther := controlplane.CustomerProvedOn(b.customer.Email, "link", other.ID)
	confirm, _ := controlplane.CustomerDecision{Actor: onOther, InvocationID: other.ID, Verb: controlplane.CustomerConfirm}.Showing(other)
	if got, err := b.cp.CustomerDecide(b.ctx, confirm); err != nil || !got.Done {
		t.Fatalf("the confirmation on the quote shown: %+v, %v", got, err)
	}
	c, ok, err = b.cp.Consent(b.ctx, other.ID)
	if err != nil || !ok || c.Proof != "link" || c.Decision != consent.Confirm || c.Passkey != nil || c.Verify(other.ID, c.Quote) != nil {
		t.Fatalf("the confirmation's consent: %+v, %v, %v", c, ok, err)
	}
	var q struct{ Title string }
	if err := json.Unmarshal(c.Quote, &q); err != nil || q.Title != other.Quote.Title {
		t.Fatalf("the quote recorded: %s, %v", c.Quote, err)
	}
}
