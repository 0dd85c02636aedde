// Package shopadapter connects the bundled demo shop to Countersign: it
// implements adapter.System over the shop's frontend-shaped HTTP API.
//
// The adapter is the only place where the shop's API is turned into
// something an assistant may use:
//
//   - Principal. A call's adapter.Principal.CustomerRef is the customer's
//     e-mail; it is mapped with GET /customers?email= to exactly one shop
//     customer. Every subscription, order and invoice the adapter reads or
//     changes must belong to that customer; anything else is answered as
//     not found, so nobody learns that it exists. Products belong to the
//     shop and are not owned by a customer: update_product_description is
//     meant for a shop operator principal, and the console must only offer
//     it on tasks run for one.
//   - Narrow actions. Six write verbs with enum arguments (see Actions),
//     each declared once as an adapter.ActionSpec with its guidance text.
//     DryRun performs every check the shop or the policy would make and
//     returns the quote; Execute re-reads the target, refuses a stale one,
//     claims the idempotency key in the request ledger, sends the write with
//     X-Request-Id set to the key, and records the outcome.
//   - Errors. Every shop answer that is not a success becomes an
//     *adapter.Error with a stable code, Retryable, a hint and an Outcome; a
//     bare status never reaches the caller. A write whose answer was lost is
//     Unknown, never retried, and reconciled with Lookup and Verify.
//   - Read tools. Six read verbs whose answers are built by copying an
//     explicit allowlist of fields. The shop's internal fields (risk scores,
//     fraud flags, margins, costs, notes, processor ids) are not even decoded.
//
// The shop's errors map as follows (everything is Refused unless noted):
//
//	402 card_declined                  payment_method_declined
//	404 resource_missing               not_found
//	409 version_conflict               target_changed
//	409 subscription_already_cancelled already_cancelled
//	409 subscription_not_cancelled     not_cancelled
//	409 subscription_ended             subscription_ended
//	409 invoice_already_void           invoice_already_void
//	409 invoice_not_voidable           invoice_not_voidable
//	409 invoice_not_paid               invoice_not_paid
//	409 order_already_fulfilled        order_already_fulfilled (policy refusal)
//	422 amount_too_large               amount_above_refundable
//	422 charge_already_refunded        amount_above_refundable
//	400 parameter_*, body_invalid      invalid_arguments (fields named)
//	other 4xx                          system_rejected
//	5xx on a write                     outcome_unknown (Unknown)
//	5xx on a read                      system_error (NotSent, retryable)
//	no connection / nothing written    system_unreachable (NotSent, retryable)
//	lost answer after a written write  outcome_unknown (Unknown)
package shopadapter
