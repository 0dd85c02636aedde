package controlplane

import (
	"context"
	"errors"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// VouchKind says how the business stands behind a task's customer.
type VouchKind string

// The ways a task's customer is vouched for.
const (
	// VouchAssertion is a task assertion signed by the business's site
	// with the system's secret, naming the assistant, the customer and
	// the system; its nonce is spent when the task opens.
	VouchAssertion VouchKind = "assertion"
	// VouchAnyCustomer is an admin's grant to the assistant to act for any
	// customer (a staff-facing assistant).
	VouchAnyCustomer VouchKind = "any_customer"
)

// Vouch is how an assistant's task's customer was vouched for. The
// assistants domain verifies it; CreateTask refuses an assistant's task
// without one, spends an assertion's nonce in the transaction that opens
// the task and records the vouch in the task.created event.
type Vouch struct {
	Kind VouchKind
	// System, Nonce and ExpiresAt identify an assertion.
	System    string
	Nonce     string
	ExpiresAt time.Time
}

// NotVouched is the refusal of a task whose customer nobody vouched for.
// Its message is the same for every customer, known to a system or not.
func NotVouched(why string) error {
	return &apperr.Error{Kind: apperr.Forbidden, Code: "customer_not_vouched",
		Message: "The business has not vouched for this task's customer: " + why,
		Hint: "Send customer_assertion: a task assertion the business's site signs for your assistant id and this customer " +
			"(see docs/api.md, \"Opening a task\"), or ask an admin to let this assistant act for any customer."}
}

// spendVouch checks an assistant's task has a vouch and spends an
// assertion's nonce in the task's transaction, so a refused task leaves
// the assertion unspent and a replayed one opens nothing.
func spendVouch(ctx context.Context, tx *store.Tx, in NewTask, customerRef string, now time.Time) error {
	switch in.Vouch.Kind {
	case VouchAnyCustomer:
		return nil
	case VouchAssertion:
		err := tx.SpendCustomerAssertion(ctx, in.Vouch.System, in.Vouch.Nonce, customerRef, in.Vouch.ExpiresAt, now)
		if errors.Is(err, store.ErrConflict) {
			return NotVouched("its assertion was used already; each assertion opens one task.")
		}
		return err
	}
	return NotVouched("no customer_assertion was sent.")
}

func (v Vouch) eventData() map[string]any {
	if v.Kind == VouchAssertion {
		return map[string]any{"by": string(v.Kind), "system": v.System, "nonce": v.Nonce}
	}
	return map[string]any{"by": string(v.Kind)}
}
