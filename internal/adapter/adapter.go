// Package adapter is the contract between Countersign and a connected
// business system. Every system implements System: it declares its narrow
// actions and read tools, resolves identifiers from the authenticated
// customer, dry-runs an action into a Quote (all validation, no mutation),
// executes it once per idempotency key, verifies it by reading back, and
// looks up an earlier call by its key. Internal fields of the business
// system never leave an adapter.
//
// README.md beside this file describes the contract at length and how to
// write an adapter for your own system.
package adapter

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// System is one connected business system reached through its adapter.
// Implementations must be safe for concurrent use.
type System interface {
	// Name identifies the system within this installation, e.g. "shop" or
	// "shop-eu". A target is always (system, principal, object id).
	Name() string
	// Actions lists the system's write verbs with their contracts.
	Actions() []ActionSpec
	// ReadTools lists the system's read verbs.
	ReadTools() []ReadToolSpec

	// Resolve turns a reference to an object of kind ("subscription",
	// "order", …), which may be an id or a human description such as "Pro"
	// or "acme.example", into exactly one object of the principal's. Two or
	// more candidates fail with CodeAmbiguous listing them in human terms;
	// none fails with CodeNotFound. It never guesses.
	Resolve(ctx context.Context, p Principal, kind, ref string) (Target, error)
	// DryRun validates an action completely without changing anything and
	// returns what would happen. A refusal is an *Error with Outcome Refused.
	DryRun(ctx context.Context, p Principal, action string, args json.RawMessage) (Quote, error)
	// Execute performs the action once for key. A repeated key sends nothing
	// and returns the first result with Deduplicated set. An error is an
	// *Error whose Outcome says whether the effect is known not to have
	// happened (Refused, NotSent) or is unknown (Unknown).
	Execute(ctx context.Context, p Principal, call Call) (Result, error)
	// Verify reads the target again and reports whether the effect of call
	// is there. Only a change found there counts as done.
	Verify(ctx context.Context, p Principal, call Call, result *Result) (Verification, error)
	// Lookup inspects what is known of an earlier call by its key, read-only:
	// the adapter's own request ledger and the system's evidence. A missing
	// record is reported as such, not as proof that nothing happened.
	Lookup(ctx context.Context, p Principal, call Call) (LookupResult, error)
	// Read runs a read tool: facts with stable ids, allowlisted fields, lists
	// capped with Truncated set.
	Read(ctx context.Context, p Principal, tool string, args json.RawMessage) (ReadResult, error)
}

// Principal is on whose behalf a call is made: the authenticated customer,
// as the console knows them (their e-mail or external reference). The
// adapter maps it to the system's own account and checks every object
// belongs to it.
type Principal struct {
	CustomerRef string
}

// NormaliseCustomerRef is the one rule for customer references: they are
// e-mail addresses and compare without regard to case, so every place a
// reference enters — a task opened for a customer, a customer account's
// e-mail, a confirmation link — keeps it trimmed and in lower case, and an
// adapter matches a system's e-mail by the same form.
func NormaliseCustomerRef(ref string) string { return strings.ToLower(strings.TrimSpace(ref)) }

// Target names one business object: in which system, which object, how a
// person would call it, and its version when it was read.
type Target struct {
	System  string `json:"system"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Display string `json:"display"`
	// Version is the object's version or updated_at when it was read; a
	// dispatch compares it to detect a stale target.
	Version string `json:"version,omitempty"`
	// BusinessKey, set only by the adapter from what it read of the object,
	// names the business object this one is, whichever system reaches it:
	// two targets with the same key are one object for exposure, blocks
	// and duplicates. Nil when the object's kind declares no identity.
	BusinessKey *BusinessKey `json:"business_key,omitempty"`
}

// BusinessKey is the key a business declares to make an object of one
// system the same object as another system's: the business name of the
// key ("order_number") and its value as the system read it ("#A1B2C3").
type BusinessKey struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Call is one attempt of an invocation: the action, its validated
// arguments, the key every attempt of that invocation carries, and the
// quote that was confirmed.
type Call struct {
	Action         string          `json:"action"`
	Args           json.RawMessage `json:"args"`
	IdempotencyKey string          `json:"idempotency_key"`
	Quote          Quote           `json:"quote"`
}

// Quote is the dry-run's answer: exactly what will change, in human terms.
// The customer's confirmation page and the approver's card are rendered
// from it, never from the model's text.
type Quote struct {
	// Title names the change and the object: "Cancel Pro plan for acme.example".
	Title  string `json:"title"`
	Target Target `json:"target"`
	// Lines are from→to values and the arithmetic of money amounts.
	Lines []QuoteLine `json:"lines"`
	// Consequences are plain sentences the system will keep true:
	// "You will not be charged on May 1."
	Consequences []string `json:"consequences"`
	// AmountCents is the money moved, if any, in Currency.
	AmountCents *int64 `json:"amount_cents,omitempty"`
	Currency    string `json:"currency,omitempty"`
	// EffectiveAt is when the change takes effect.
	EffectiveAt *time.Time `json:"effective_at,omitempty"`
	// Constraints are the policy rules that applied, in words.
	Constraints []string `json:"constraints,omitempty"`
	// ConfirmLabel and DeclineLabel name the buttons by what they do:
	// "Cancel subscription" / "Keep plan".
	ConfirmLabel string `json:"confirm_label"`
	DeclineLabel string `json:"decline_label"`
	// DoneWords, optional, is what the customer's page calls the request
	// once it is carried out, without the full stop: "Refunded". A quote
	// without it (one stored before it existed) is shown the action's
	// ActionSpec.DoneWords.
	DoneWords string `json:"done_words,omitempty"`
	// Reversible says whether a compensation exists.
	Reversible bool `json:"reversible"`
	// Customer holds what the customer's pages show instead of the system's
	// ids: optional, and an adapter that leaves it out gets the pages built
	// from Title and Lines.
	Customer *CustomerFacts `json:"customer,omitempty"`
	// Basis, optional, holds the target's values as the dry run read them
	// that the adapter's verification compares the read-back with (a
	// description file's verify.expect reads them as before). It is never
	// shown; it is kept so that a verification after a restart has them.
	Basis map[string]any `json:"basis,omitempty"`
	// Locale is the BCP 47 tag of the locale the texts are written in;
	// empty, the system's default. Translations, optional, holds the
	// texts in other locales (quote_locale.go): pages show q.In(locale).
	Locale       string                `json:"locale,omitempty"`
	Translations map[string]QuoteWords `json:"translations,omitempty"`
}

// CustomerFacts are a quote's words for the customer: how a person
// recognises the object (its date, its items, a short reference they can
// read out on the phone) and what the money does, with no internal id.
// Every field is optional.
type CustomerFacts struct {
	// Title is the change without internal ids: "Refund $42.10 for your
	// Walnut desk lamp". The customer's page asks it as a question.
	Title string `json:"title,omitempty"`
	// Reference is the object's short reference as the system shows it to
	// its customers: "Order #245695".
	Reference string `json:"reference,omitempty"`
	// Date is the object's own date (an order's placing), named by DateLabel
	// ("Ordered").
	Date      *time.Time `json:"date,omitempty"`
	DateLabel string     `json:"date_label,omitempty"`
	// Items are what the object holds, in words: "Walnut desk lamp × 1".
	Items []string `json:"items,omitempty"`
	// Why says in words why the amount is less than what was paid (the
	// policy rules that held part of it back), one sentence each.
	Why []string `json:"why,omitempty"`
	// MoneyArrives says when and where money paid out arrives: "Within 5–10
	// business days, on the card you paid with."
	MoneyArrives string `json:"money_arrives,omitempty"`
}

// TargetVersion is the version of the target the quote was made against.
func (q Quote) TargetVersion() string { return q.Target.Version }

// QuoteLine is one line of a quote: a label and a value, or a change from
// one value to another.
type QuoteLine struct {
	Label string `json:"label"`
	From  string `json:"from,omitempty"`
	To    string `json:"to"`
	// Emphasis marks the line that carries the decision (the total).
	Emphasis bool `json:"emphasis,omitempty"`
	// Sum marks a money line that is the sum of the money lines above it,
	// back to the previous Sum line: the page draws it as a subtotal, and
	// a quote whose lines are marked so adds up where it is read.
	Sum bool `json:"sum,omitempty"`
	// Customer, optional, says the line as one sentence in the customer's
	// words for their pages, where the label and values are the system's
	// codes: "Your subscription will be cancelled" for "Status: active →
	// cancelled". Staff pages show the label and values.
	Customer string `json:"customer,omitempty"`
}

// Result is what an executed action produced.
type Result struct {
	// Reference is the stable reference a customer can quote:
	// "sub_cancel_8f2c", "re_…".
	Reference string `json:"reference"`
	// ShortReference, optional, is the reference as the system shows it to
	// its customers, short enough to read out: "#85380F". Customer
	// pages show it instead of Reference.
	ShortReference string `json:"short_reference,omitempty"`
	// Data holds allowlisted facts about the effect.
	Data map[string]any `json:"data,omitempty"`
	// AmountCents and Currency, when the adapter reads them, are the
	// amount the system itself recorded for the effect (a refund it paid),
	// which may differ from the quote's.
	AmountCents *int64 `json:"amount_cents,omitempty"`
	Currency    string `json:"currency,omitempty"`
	// Deduplicated is true when the key had been used and nothing was sent.
	Deduplicated bool `json:"deduplicated,omitempty"`
	// Steps records each request of a multi-step workflow and its outcome.
	Steps []Step `json:"steps,omitempty"`
}

// Step is one request of a named workflow.
type Step struct {
	Name    string `json:"name"`
	Outcome string `json:"outcome"` // "applied", "refused", "unknown", "compensated"
	Detail  string `json:"detail,omitempty"`
}

// Verification is what a read-back found.
type Verification struct {
	// Verified is true only when the change was found on the object.
	Verified bool `json:"verified"`
	// Evidence describes what was read, for the journal and for a person.
	Evidence string `json:"evidence"`
	// Observed holds allowlisted values that were read back.
	Observed map[string]any `json:"observed,omitempty"`
	At       time.Time      `json:"at"`
}

// LookupResult is what is known of an earlier call.
type LookupResult struct {
	// Found is true when the adapter's ledger has the call.
	Found bool `json:"found"`
	// Kept is true when the adapter claims each call's key in the request
	// ledger before the call leaves (Writes does; Ledger.Lookup sets it):
	// then a key the ledger does not have is a call never begun.
	Kept bool `json:"kept,omitempty"`
	// LedgerState is the ledger's state of the call: "sending", "applied",
	// "refused", "unknown".
	LedgerState string `json:"ledger_state,omitempty"`
	// Effects are the system's records of effects carrying the key.
	Effects []Effect `json:"effects"`
	// Result is the call's result when the ledger or the evidence gives one.
	Result *Result `json:"result,omitempty"`
	Error  *Error  `json:"error,omitempty"`
	// BegunAt is when the ledger's row of the call was begun (zero when it
	// has none).
	BegunAt time.Time `json:"begun_at,omitempty"`
	// NotApplied, set by an adapter whose effect record is authoritative,
	// says the call was not applied: its outcome is not known in the
	// ledger, the record holds no effect under its key, and the call was
	// begun long enough ago that it would have committed by now. The lookup
	// itself changes nothing; reconcile settles the invocation failed with
	// it and records it in the ledger.
	NotApplied *Error `json:"not_applied,omitempty"`
}

// Effect is a business system's record of a change it applied.
type Effect struct {
	ID     string    `json:"id"`
	At     time.Time `json:"at"`
	Kind   string    `json:"kind"`
	Object string    `json:"object"`
	// AmountCents is the effect's amount when it moved money (a refund),
	// so a person can compare it with the request's.
	AmountCents *int64 `json:"amount_cents,omitempty"`
	// Currency is the amount's currency as the system recorded it, when it
	// says; empty means the quote's.
	Currency string `json:"currency,omitempty"`
}

// ReadResult is a read tool's answer.
type ReadResult struct {
	Data      any  `json:"data"`
	Count     int  `json:"count"`
	Truncated bool `json:"truncated"`
}
