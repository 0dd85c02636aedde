package controlplane_test

import (
	"strings"
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// TestCustomerDecideIsTheOneCheck: the one call of a customer's decision
// refuses another customer's request as not found and a proof made on
// another request with prove_for_this_request, for every verb, leaving
// both as they were; the customer's reference is compared in its one
// normalised form; and a request decided meanwhile is no error.
func TestCustomerDecideIsTheOneCheck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.setStage("issue_refund", controlplane.StageAssisted)
	taskA := b.task([]string{"issue_refund"}, 5, 1, 60)
	taskB := b.task([]string{"issue_refund"}, 5, 1, 60)
	a := b.propose(taskA, "issue_refund", refund(b.order(3).ID, 1, "damaged"), "")
	bInv := b.propose(taskB, "issue_refund", refund(b.order(3).ID, 1500, "damaged"), "")
	verbs := []controlplane.CustomerVerb{controlplane.CustomerConfirm, controlplane.CustomerDecline, controlplane.CustomerStop}

	stranger := controlplane.CustomerActor("someone.else@example.test", controlplane.ProofAccount)
	onA := controlplane.CustomerProvedOn(b.customer.Email, "code", a.ID)
	for _, verb := range verbs {
		if _, err := customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: stranger, InvocationID: a.ID, Verb: verb}); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("another customer's %s: %v, want not found", verb, err)
		}
		_, err := customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: onA, InvocationID: bInv.ID, Verb: verb})
		if e, ok := apperr.As(err); !ok || e.Code != "prove_for_this_request" {
			t.Errorf("%s of B with a code proved on A: %v, want prove_for_this_request", verb, err)
		}
		refused := func(string) error { return apperr.New(apperr.Forbidden, "not this proof") }
		if _, err := customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: onA, InvocationID: a.ID, Verb: verb, ProofAccepted: refused}); !apperr.Is(err, apperr.Forbidden) {
			t.Errorf("%s of A with a proof its system refuses: %v, want forbidden", verb, err)
		}
	}
	for _, inv := range []controlplane.Invocation{a, bInv} {
		if got := b.get(inv.ID); got.State != controlplane.AwaitingConfirmation || got.Version != inv.Version {
			t.Fatalf("%s after the refused decisions: %s v%d, want untouched", inv.ID, got.State, got.Version)
		}
	}
	for _, task := range []controlplane.Task{taskA, taskB} {
		if got, err := b.cp.Task(b.ctx, task.ID); err != nil || got.State != controlplane.TaskActive {
			t.Fatalf("task after the refused stops: %+v, %v", got, err)
		}
	}

	// A decline's reason is checked once the request is the customer's;
	// the request comes back for the page to ask again.
	d, err := customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: onA, InvocationID: a.ID, Verb: controlplane.CustomerDecline,
		Reason: strings.Repeat("x", 1001)})
	if !apperr.Is(err, apperr.Invalid) {
		t.Errorf("a decline with a reason too long: %v, want invalid", err)
	}
	if d.Invocation.ID != a.ID || d.Done {
		t.Errorf("a refused reason came back with request %q (done %v), want A for the page to ask again", d.Invocation.ID, d.Done)
	}

	d, err = customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: onA, InvocationID: a.ID, Verb: controlplane.CustomerConfirm})
	if err != nil || !d.Done || d.Invocation.State != controlplane.Approved {
		t.Fatalf("A confirmed with its own code: %+v, %v", d, err)
	}
	d, err = customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: onA, InvocationID: a.ID, Verb: controlplane.CustomerDecline})
	if err != nil || d.Done || d.Invocation.State != controlplane.Approved {
		t.Errorf("declining A once confirmed: %+v, %v, want nothing done and no error", d, err)
	}

	// The account, named in another case and with spaces, is the customer.
	account := controlplane.CustomerActor("  "+strings.ToUpper(b.customer.Email)+" ", controlplane.ProofAccount)
	d, err = customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: account, InvocationID: bInv.ID, Verb: controlplane.CustomerStop})
	if err != nil || !d.Done || d.Task.State != controlplane.TaskPaused || !d.Task.PausedByPerson() {
		t.Fatalf("B stopped with the customer's account: %+v, %v", d, err)
	}
	d, err = customerDecide(b.ctx, b.cp, controlplane.CustomerDecision{Actor: account, InvocationID: bInv.ID, Verb: controlplane.CustomerConfirm})
	if err != nil || d.Done || b.get(bInv.ID).State != controlplane.AwaitingConfirmation {
		t.Errorf("confirming B of a stopped task: %+v, %v, want nothing done", d, err)
	}
}

// links mints links for the control plane and counts them.
type links struct{ n int }

func (l *links) NewLink(id, customerRef string, expiresAt, now time.Time) store.ConfirmationLink {
	l.n++
	return store.ConfirmationLink{Selector: "sel-" + id, VerifierHash: []byte("h"), InvocationID: id, CustomerRef: customerRef,
		ExpiresAt: expiresAt, CreatedAt: now}
}

// TestRoutingToTheCustomerMakesTheLink: the invocation a proposal routes
// to its customer has its link from the proposal's transaction; one an
// agent approves gets none.
func TestRoutingToTheCustomerMakesTheLink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	minter := &links{}
	b.cp.MintLinksWith(minter)
	b.setStage("issue_refund", controlplane.StageAssisted)
	task := b.task([]string{"issue_refund"}, 5, 1, 60)
	inv := b.propose(task, "issue_refund", refund(b.order(3).ID, 1, "damaged"), "")
	l, err := b.store.LiveConfirmationLink(b.ctx, inv.ID)
	if err != nil || minter.n != 1 || l.ExpiresAt != *inv.DeadlineAt {
		t.Fatalf("link after the proposal: %+v, %v (%d made), want one until the deadline %v", l, err, minter.n, inv.DeadlineAt)
	}
	b.setStage("issue_refund", controlplane.StagePropose)
	agents := b.propose(task, "issue_refund", refund(b.order(4).ID, 2, "damaged"), "")
	if _, err := b.store.LiveConfirmationLink(b.ctx, agents.ID); agents.State == controlplane.AwaitingConfirmation || err == nil {
		t.Errorf("an invocation routed %s has a link (%v)", agents.State, err)
	}
}
