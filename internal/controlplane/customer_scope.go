package controlplane

import (
	"context"
	"errors"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/store"
)

// ProofAccount is the one customer proof that spans the customer's
// requests: their own signed-in account, as a bank session does. Every
// other proof (a code, an assertion) was made on one request's link and
// decides that request only.
const ProofAccount = "account"

// MaxRequotes bounds the walk from a request back to the one a proof was
// made on: a re-quote chain longer than this is not followed. The pages'
// check (confirmation.Covers) walks the same chain with the same bound.
const MaxRequotes = 16

// ProveForThisRequest is the refusal of a code or an assertion made for
// another request: the browser must show it's the customer for this one.
func ProveForThisRequest() error {
	return &apperr.Error{Kind: apperr.Unauthenticated, Code: "prove_for_this_request",
		Message: "You showed us it's you for another request. Each request needs its own proof.",
		Hint:    "Open this request's link from your assistant and show us it's you for it, or sign in to your account to see all your requests."}
}

// CustomerProvedOn is the end customer acting with a proof made on the
// link of invocation provedFor (a code or an assertion). The control plane
// lets such an actor decide that request, and the re-quotes that replaced
// it, and nothing else of the customer's.
func CustomerProvedOn(customerRef, proof, provedFor string) Actor {
	a := CustomerActor(customerRef, proof)
	a.ProvedFor = provedFor
	return a
}

// SameCustomer says whether two customer references name the same
// customer: references are e-mail addresses, compared in their one
// normalised form (adapter.NormaliseCustomerRef). It is the only
// comparison of customers: the state machine, the links and the pages all
// use it.
func SameCustomer(a, b string) bool {
	return a != "" && adapter.NormaliseCustomerRef(a) == adapter.NormaliseCustomerRef(b)
}

// customerMayDecide is the state machine's own check of a customer's
// decision on row, whose task's customer is taskCustomer: the customer is
// the task's (else apperr.NotFound, as if it did not exist), and a proof
// other than the account was made on row or on a request row re-quoted
// (else apperr.Unauthenticated, code prove_for_this_request). The pages
// check the same before they ask (confirmation.MayDecide); this holds
// for any caller.
func customerMayDecide(ctx context.Context, tx *store.Tx, actor Actor, row store.Invocation, taskCustomer string) error {
	if actor.Kind != ActorCustomer || !SameCustomer(actor.ID, taskCustomer) {
		return apperr.New(apperr.NotFound, "No such request.")
	}
	if actor.Proof == ProofAccount {
		return nil
	}
	at := row
	for range MaxRequotes {
		if actor.ProvedFor != "" && at.ID == actor.ProvedFor {
			return nil
		}
		if at.SupersedesID == nil {
			break
		}
		prev, err := tx.Invocation(ctx, *at.SupersedesID)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			return err
		}
		at = prev
	}
	return ProveForThisRequest()
}

// customerMayStop checks a customer's "Stop this" on task: the customer is
// the task's (else apperr.NotFound), and a proof other than the account
// was made on a request of this task (else prove_for_this_request): a code
// for one request stops that request's conversation, not another's.
func customerMayStop(ctx context.Context, tx *store.Tx, actor Actor, task store.Task) error {
	if !SameCustomer(actor.ID, task.CustomerRef) {
		return apperr.New(apperr.NotFound, "No such task.")
	}
	if actor.Proof == ProofAccount {
		return nil
	}
	if actor.ProvedFor != "" {
		inv, err := tx.Invocation(ctx, actor.ProvedFor)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err == nil && inv.TaskID == task.ID {
			return nil
		}
	}
	return &apperr.Error{Kind: apperr.Unauthenticated, Code: "prove_for_this_request",
		Message: "You showed us it's you for a request of another conversation.",
		Hint:    "Open this request's link and show us it's you for it, or sign in to your account."}
}
