package controlplane

import (
	"strings"

	"countersign/internal/adapter"
)

// Say is the sentence the assistant may tell the customer now. It never
// says "done" for an invocation that is approved, dispatching or
// unverified: approval and execution are separate facts, and a write whose
// outcome is unknown is not reported as done. spec is the invocation's
// action, whose words name a done one (a zero spec says "Done").
func (inv Invocation) Say(spec adapter.ActionSpec) string {
	switch inv.State {
	case AwaitingConfirmation:
		return "I've prepared this. Please check the details on the confirmation page and confirm it there; nothing happens until you do."
	case AwaitingApproval:
		return "A member of our team needs to approve this first. Nothing has changed yet; I'll tell you when it is decided."
	case Approved, Dispatching, Proposed:
		return "This is approved and being processed. I can't confirm it has gone through yet."
	case Completed:
		s := spec.Done() + "."
		if ref := inv.CustomerReference(); ref != "" {
			s += " Reference: " + ref + "."
		}
		return s
	case Failed:
		if inv.Error != nil && inv.Error.Code == adapter.CodeNotApplied {
			// Settled by reconciling a lost answer: the customer hears that
			// it was checked, not the record's technical words. The code
			// also settles a call Countersign's own ledger never had, when
			// no system's record was read, so the sentence names none.
			return "This did not go through: we checked, and it was never carried out, so nothing has changed. I can prepare it again if you still want it."
		}
		s := "I couldn't do this"
		if inv.Error != nil && inv.Error.Message != "" {
			s += ": " + strings.TrimSuffix(inv.Error.Message, ".")
		}
		s += "."
		if inv.Error != nil && inv.Error.Hint != "" && !inv.Error.Retryable {
			s += " A person can help with this if you need."
		}
		return s
	case Unverified:
		return "I could not confirm this went through; a person will check and we will let you know."
	case NotDispatched:
		if inv.Withdrawn() {
			return "This request was withdrawn because the task it belonged to was cancelled, so nothing has changed."
		}
		return "This was not carried out. " + inv.NotDispatchedReason.Sentence()
	case Rejected, Expired:
		return inv.endedSay()
	case Reversed:
		return "This was done and has since been reversed."
	}
	return "I can't say yet where this stands."
}

// endedSay says who ended a rejected or expired invocation and why, as the
// customer's page does: the customer's own decline as theirs, the team's
// reason in its words, a deadline nobody met, a quote that was replaced.
func (inv Invocation) endedSay() string {
	text := strings.TrimSuffix(strings.TrimSpace(inv.DecisionReason), ".")
	switch inv.Reason().Code {
	case ReasonDeclinedByCustomer:
		return "You declined this, so nothing has changed."
	case ReasonSuperseded:
		return "The details changed after this was prepared, so it was not carried out. I can prepare it again if you still want it."
	case ReasonConfirmationExpired:
		return "This request expired before it was confirmed, so nothing has changed."
	case ReasonApprovalExpired:
		return "Our team did not decide on this in time, so nothing has changed."
	}
	if q, ok := IsQuestion(text); ok {
		q = strings.TrimSpace(q)
		if !strings.HasSuffix(q, "?") && !strings.HasSuffix(q, "!") {
			q += "."
		}
		return "Our team needs to know more before this can go ahead: " + q
	}
	if text != "" {
		return "Our team declined this: " + text + "."
	}
	return "Our team declined this, so nothing has changed."
}

// CustomerReference is the reference the customer is given for a done
// change: the system's short one as it shows it to its customers
// ("#75CDDA") when it gives one, else its reference; empty
// without a result. The assistant's sentence and the customer's page both
// use it, so the two name the change alike.
func (inv Invocation) CustomerReference() string {
	if inv.Result == nil {
		return ""
	}
	if inv.Result.ShortReference != "" {
		return inv.Result.ShortReference
	}
	return inv.Result.Reference
}
