package controlplane_test

import (
	"encoding/json"
	"sync/atomic"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// TestAProposalRoutedByAPolicyThatChangedIsNotRecorded changes the
// action's policy after a proposal read it to route and before its
// transaction locks it: the proposal is refused (policy_changed,
// retryable) rather than recorded under the policy it no longer has.
func TestAProposalRoutedByAPolicyThatChangedIsNotRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 10, 5, 60)
	var changed atomic.Bool
	b.cp.SetHooks(controlplane.Hooks{BeforeExposureLock: func() {
		if changed.CompareAndSwap(false, true) {
			b.setStage("issue_refund", controlplane.StagePropose)
		}
	}})
	_, err := b.tryPropose(task, "issue_refund", refund(b.order(2).ID, 800, "damaged"), "")
	if e, ok := apperr.As(err); !ok || e.Code != "policy_changed" || !e.Retryable {
		t.Fatalf("a proposal whose policy changed before its transaction: %v, want refused with policy_changed, retryable", err)
	}
	if got := b.recorded(task.ID); got != "0 invocations (versions summing to 0), 0 links" {
		t.Errorf("recorded: %s, want nothing", got)
	}
	if inv, err := b.tryPropose(task, "issue_refund", refund(b.order(2).ID, 800, "damaged"), ""); err != nil || inv.State != controlplane.AwaitingApproval {
		t.Errorf("proposed again: %+v, %v, want routed by the policy in force (awaiting approval)", inv, err)
	}
}

// TestAnAdminsChangeWaitsForTheWriteThatReadIt holds a proposal in its
// transaction after its checks and revokes its key, disables its
// assistant or switches its action off meanwhile: the change waits for
// the proposal's commit (the checks share-locked the rows it updates), so
// the write it let through was recorded before the change, never after.
func TestAnAdminsChangeWaitsForTheWriteThatReadIt(t *testing.T) {
	t.Parallel()
	changes := []struct {
		name, table string
		do          func(b *testBundle, who controlplane.Actor) error
	}{
		{"revoke the key", "api_keys", func(b *testBundle, who controlplane.Actor) error {
			_, err := b.store.RevokeAPIKey(b.ctx, who.KeyID, b.clock.Now())
			return err
		}},
		{"disable the assistant", "assistants", func(b *testBundle, who controlplane.Actor) error {
			now := b.clock.Now()
			return b.store.SetAssistantDisabled(b.ctx, who.ID, &now)
		}},
		{"switch the action off", "assistant_actions", func(b *testBundle, who controlplane.Actor) error {
			return b.switchActions(who.ID, false)
		}},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			who := b.keyedAssistant()
			task := b.task([]string{"issue_refund"}, 10, 5, 60)
			changed := make(chan error, 1)
			var waited bool
			b.cp.SetHooks(controlplane.Hooks{ExposureCounted: func() {
				go func() { changed <- c.do(b, who) }()
				waited = b.untilWaitingOnLock(c.table, 1, changed)
			}})
			args, _ := json.Marshal(refund(b.order(2).ID, 800, "damaged"))
			inv, err := b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: args, Actor: who})
			if err != nil {
				t.Fatalf("the proposal that read its standing first: %v", err)
			}
			if err := <-changed; err != nil {
				t.Fatalf("%s after the proposal: %v", c.name, err)
			}
			if !waited {
				t.Errorf("%s committed while a proposal that had checked it was still to commit", c.name)
			}
			b.wantState(inv.ID, controlplane.AwaitingApproval)
			other, _ := json.Marshal(refund(b.order(2).ID, 700, "damaged"))
			if _, err := b.cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "issue_refund", Args: other, Actor: who}); err == nil {
				t.Errorf("a proposal after %s was accepted", c.name)
			}
		})
	}
}
