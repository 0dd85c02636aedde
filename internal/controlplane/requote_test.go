package controlplane_test

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"countersign/internal/controlplane"
)

// TestRequoteSupersedesOnceWhenTheTargetChanged refunds part of an order
// at the shop after the quote; ten concurrent re-quotes close the old
// invocation once and agree on one successor with the fresh quote.
func TestRequoteSupersedesOnceWhenTheTargetChanged(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	order := b.order(3)
	inv := b.propose(task, "issue_refund", refund(order.ID, 1000, "damaged"), "")
	customer := controlplane.CustomerProvedOn(b.customer.Email, "code", inv.ID)

	if _, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerActor("someone@example.test", "code"), inv.ID); err == nil {
		t.Error("another customer could ask for a fresh quote")
	}

	body, _ := json.Marshal(map[string]any{"order_id": order.ID, "amount_cents": 500, "reason": "goodwill"})
	res, err := b.shopPost("/refunds", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	var wg sync.WaitGroup
	successors := make(chan string, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The confirm that supersedes answers with the fresh quote; one
			// that read the request after that finds nothing to decide.
			d, err := customerConfirm(b.ctx, b.cp, customer, inv.ID)
			switch {
			case err != nil || d.Done:
				t.Errorf("confirm of a changed order: %+v, %v", d, err)
			case d.Requoted:
				successors <- d.Invocation.ID
			case d.Invocation.ID != inv.ID || d.Invocation.State != controlplane.Rejected:
				t.Errorf("confirm after the fresh quote: %+v, want the superseded request", d.Invocation)
			}
		}()
	}
	wg.Wait()
	close(successors)
	var next string
	for id := range successors {
		if next != "" && id != next {
			t.Errorf("two successors: %s and %s", next, id)
		}
		next = id
	}
	old := b.wantState(inv.ID, controlplane.Rejected)
	fresh := b.wantState(next, controlplane.AwaitingConfirmation)
	if fresh.SupersedesID != inv.ID || fresh.IdempotencyKey == old.IdempotencyKey || fresh.Quote.Target.Version == old.Quote.Target.Version {
		t.Errorf("successor %+v does not carry a fresh quote for %s", fresh, inv.ID)
	}
	events, err := b.cp.Timeline(b.ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	superseded := 0
	for _, e := range events {
		if e.Action == "invocation.superseded" && e.InvocationID == inv.ID {
			superseded++
		}
	}
	if superseded != 1 {
		t.Errorf("%d superseded events, want 1", superseded)
	}
	if d, err := customerConfirm(b.ctx, b.cp, customer, inv.ID); err != nil || d.Done || b.get(inv.ID).Version != old.Version {
		t.Errorf("the superseded invocation could still be confirmed: %+v, %v", d, err)
	}
	// The successor's target has not moved since its quote: it is
	// confirmed as it stands, with no fresh quote.
	same, err := customerConfirm(b.ctx, b.cp, controlplane.CustomerProvedOn(b.customer.Email, "code", next), next)
	if err != nil || !same.Done || same.Requoted || same.Invocation.ID != next || same.Invocation.State != controlplane.Approved {
		t.Fatalf("confirm of an unchanged target: %+v, %v", same, err)
	}
}
