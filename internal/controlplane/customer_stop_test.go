package controlplane_test

import (
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
)

// TestTheCustomerStopsOnlyTheirOwnTask: a customer with a proof may pause
// their own task — a person's pause, which neither they nor the assistant
// lift — but not another customer's task, and may never resume or cancel.
func TestTheCustomerStopsOnlyTheirOwnTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 5, 1, 10)
	customer := controlplane.CustomerActor(b.customer.Email, controlplane.ProofAccount)

	if _, err := b.cp.ChangeTask(b.ctx, controlplane.CustomerActor("someone.else@example.test", "code"), task.ID, controlplane.TaskPause, 0); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("another customer's stop: %v, want not found", err)
	}
	if _, err := b.cp.ChangeTask(b.ctx, controlplane.CustomerActor(b.customer.Email, ""), task.ID, controlplane.TaskPause, 0); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("a stop without a proof: %v, want forbidden", err)
	}
	paused, err := b.cp.ChangeTask(b.ctx, customer, task.ID, controlplane.TaskPause, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !paused.PausedByPerson() || paused.PausedBy.Kind != controlplane.ActorCustomer {
		t.Fatalf("the customer's stop: paused by %+v, want a person's pause by the customer", paused.PausedBy)
	}
	for name, actor := range map[string]controlplane.Actor{"the customer": customer, "the assistant": b.assistant} {
		if _, err := b.cp.ChangeTask(b.ctx, actor, task.ID, controlplane.TaskResume, paused.Version); !apperr.Is(err, apperr.Forbidden) {
			t.Errorf("%s resumes the customer's stop: %v, want forbidden", name, err)
		}
	}
	if _, err := b.cp.ChangeTask(b.ctx, customer, task.ID, controlplane.TaskCancel, paused.Version); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("the customer cancels: %v, want forbidden", err)
	}
}

// TestChangeTaskRefusesAnUnknownVerb: ChangeTask pauses, resumes or
// cancels; any other verb is invalid and leaves the task as it was.
func TestChangeTaskRefusesAnUnknownVerb(t *testing.T) {
	t.Parallel()
	b := setup(t)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	if _, err := b.cp.ChangeTask(b.ctx, b.agent, task.ID, "archive", task.Version); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("archive a task: %v, want invalid", err)
	}
	if got, err := b.cp.Task(b.ctx, task.ID); err != nil || got.State != controlplane.TaskActive || got.Version != task.Version {
		t.Errorf("the task after the refused verb: %+v, %v; want it untouched", got, err)
	}
}
