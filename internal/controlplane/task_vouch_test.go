package controlplane_test

import (
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// TestAnAssistantsTaskNeedsAVouch is the control plane's own guard, beneath
// the assistants domain that verifies assertions: a task of an assistant
// without a vouch is refused, an assertion's nonce opens one task only,
// and a task refused for another reason leaves the nonce unspent.
func TestAnAssistantsTaskNeedsAVouch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.InsertAssistant(b.ctx, store.Assistant{ID: "asst_vouch", Name: "vouch-bot", CreatedAt: b.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	open := func(conversation string, v controlplane.Vouch, expires time.Time) error {
		_, err := b.cp.CreateTask(b.ctx, controlplane.AssistantActor("asst_vouch", "vouch-bot"), controlplane.NewTask{
			AssistantID: "asst_vouch", CustomerRef: b.customer.Email, ConversationID: conversation,
			AllowedActions: []string{"issue_refund"}, WriteBudget: 1, InflightLimit: 1, RatePerMinute: 1, ExpiresAt: expires, Vouch: v})
		return err
	}
	later := b.clock.Now().Add(time.Hour)
	notVouched := func(err error) bool { e, ok := apperr.As(err); return ok && e.Code == "customer_not_vouched" }
	if err := open("c-none", controlplane.Vouch{}, later); !notVouched(err) {
		t.Errorf("no vouch: %v, want customer_not_vouched", err)
	}
	v := controlplane.Vouch{Kind: controlplane.VouchAssertion, System: "shop", Nonce: "nonce-0123456789abcdef", ExpiresAt: later}
	if err := open("c-past", v, b.clock.Now().Add(-time.Minute)); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("a task expiring in the past: %v, want invalid", err)
	}
	if err := open("c-first", v, later); err != nil {
		t.Errorf("the first use of the assertion (after a refused task): %v", err)
	}
	if err := open("c-second", v, later); !notVouched(err) {
		t.Errorf("the second use of the assertion: %v, want customer_not_vouched", err)
	}
	if err := open("c-any", controlplane.Vouch{Kind: controlplane.VouchAnyCustomer}, later); err != nil {
		t.Errorf("with the any-customer grant: %v", err)
	}
}
