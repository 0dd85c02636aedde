package controlplane_test

import (
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// TestAProofDecidesOnlyItsRequestInTheStateMachine: a code or an assertion
// made on request A's link decides A and nothing else of the customer's,
// whoever calls the control plane — confirm, decline, a fresh quote and the
// customer's stop all refuse request B (another task of the same
// customer) with prove_for_this_request, and B stays as it was. The
// customer's own account decides both.
func TestAProofDecidesOnlyItsRequestInTheStateMachine(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	taskA := b.task([]string{"issue_refund"}, 5, 1, 60)
	taskB := b.task([]string{"issue_refund"}, 5, 1, 60)
	a := b.propose(taskA, "issue_refund", refund(b.order(3).ID, 1, "damaged"), "")
	bInv := b.propose(taskB, "issue_refund", refund(b.order(3).ID, 1500, "damaged"), "")
	if a.State != controlplane.AwaitingConfirmation || bInv.State != controlplane.AwaitingConfirmation {
		t.Fatalf("routed to %s and %s, want both awaiting the customer", a.State, bInv.State)
	}

	for _, proof := range []string{"code", "assertion"} {
		onA := controlplane.CustomerProvedOn(b.customer.Email, proof, a.ID)
		decisions := map[string]func() error{
			"confirm": func() error { _, err := customerConfirm(b.ctx, b.cp, onA, bInv.ID); return err },
			"decline": func() error { _, err := customerDecline(b.ctx, b.cp, onA, bInv.ID, ""); return err },
			"stop":    func() error { _, err := b.cp.ChangeTask(b.ctx, onA, taskB.ID, controlplane.TaskPause, 0); return err },
		}
		for name, decide := range decisions {
			err := decide()
			if e, ok := apperr.As(err); !ok || e.Code != "prove_for_this_request" {
				t.Errorf("%s of B with a %s proved on A: %v, want prove_for_this_request", name, proof, err)
			}
		}
		// No proof at all names a request: it decides nothing either.
		if _, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerActor(b.customer.Email, proof), bInv.ID); err == nil {
			t.Errorf("a %s proof naming no request confirmed B", proof)
		}
	}
	if got := b.get(bInv.ID); got.State != controlplane.AwaitingConfirmation || got.Version != bInv.Version {
		t.Fatalf("B after the refused decisions: %s v%d, want untouched", got.State, got.Version)
	}
	if task, err := b.cp.Task(b.ctx, taskB.ID); err != nil || task.State != controlplane.TaskActive {
		t.Fatalf("task B after the refused stop: %+v, %v", task, err)
	}

	if d, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", a.ID), a.ID); err != nil || !d.Done {
		t.Errorf("A with its own code: %+v, %v", d, err)
	}
	account := controlplane.CustomerActor(b.customer.Email, controlplane.ProofAccount)
	if d, err := customerConfirm(b.ctx, b.cp, account, bInv.ID); err != nil || !d.Done {
		t.Errorf("B with the customer's account: %+v, %v", d, err)
	}
}
