package customer

import (
	"context"
	"strings"

	"countersign/internal/controlplane"
	"countersign/views"
)

// This file holds the rule that the customer's page says only what
// happened: what a change means for the customer is a fact only once it is
// completed, and an ended request says who ended it and why.

// The wording modes of a request's consequences (views.CustomerConsequencesView.Mode).
const (
	// consequencesFact: the change is completed; the consequences hold.
	consequencesFact = "fact"
	// consequencesIf: still pending; what will happen if it goes ahead.
	consequencesIf = "if"
	// consequencesWould: it ended without being carried out; what would
	// have happened, folded away under a past-conditional heading.
	consequencesWould = "would"
	// consequencesHidden: whether they hold is unknown (the result is being
	// checked) or no longer true (reversed); nothing is said.
	consequencesHidden = "hidden"
)

// customerConsequences chooses how the quote's consequences, when the
// money arrives and the effective date are shown for a request in state
// (expired: its time to decide is over, even before the sweeper moved
// it). Only a completed request states them as facts; a pending one says
// what will happen if it goes ahead; one that ended without being carried
// out shows only the consequences, as what would have happened; an
// unverified or reversed one says nothing of them.
func customerConsequences(state controlplane.State, expired bool) views.CustomerConsequencesView {
	if state == controlplane.AwaitingConfirmation && expired {
		state = controlplane.Expired
	}
	v := views.CustomerConsequencesView{MoneyLabel: "When the money arrives", EffectiveLabel: "Effective"}
	switch state {
	case controlplane.Completed:
		v.Mode, v.Heading = consequencesFact, "What this means for you"
	case controlplane.AwaitingConfirmation:
		v.Mode, v.Heading = consequencesIf, "What this means for you if you confirm"
		v.MoneyLabel, v.EffectiveLabel = "If you confirm, the money arrives", "If you confirm, it takes effect"
	case controlplane.AwaitingApproval:
		v.Mode, v.Heading = consequencesIf, "What this will mean for you if our team approves it"
		v.MoneyLabel, v.EffectiveLabel = "If it is approved, the money arrives", "If it is approved, it takes effect"
	case controlplane.Proposed, controlplane.Approved, controlplane.Dispatching:
		v.Mode, v.Heading = consequencesIf, "What this will mean for you once it is done"
		v.MoneyLabel, v.EffectiveLabel = "Once it is done, the money arrives", "Once it is done, it takes effect"
	case controlplane.Unverified, controlplane.Reversed:
		v.Mode = consequencesHidden
	default:
		// Failed, not dispatched, rejected (declined, superseded) and
		// expired: nothing was carried out.
		v.Mode, v.Heading = consequencesWould, "What would have happened had it gone ahead"
		v.MoneyLabel, v.EffectiveLabel = "", ""
	}
	return v
}

// decidedBy says on a customer's page who ended a request that was not
// carried out, and why, from what the invocation recorded: the agent's
// reason as they wrote it "for the assistant and the customer", the
// customer's own decline, a deadline nobody met, or a replaced quote.
// ok is false for a state no one decided against.
func decidedBy(inv controlplane.Invocation) (by, badge, headline, detail string, ok bool) {
	r := inv.Reason()
	if r == nil || inv.State == controlplane.NotDispatched {
		return "", "", "", "", false
	}
	text := strings.TrimSpace(inv.DecisionReason)
	switch r.Code {
	case controlplane.ReasonSuperseded:
		return "system", "Details changed", "The details changed after this was prepared, so it was not carried out.",
			"Nothing has changed. Ask the assistant to prepare it again if you still want it.", true
	case controlplane.ReasonDeclinedByCustomer:
		detail = "Nothing has changed."
		if text != "" {
			detail = "Your reason: “" + text + "”. Nothing has changed."
		}
		return "you", "You declined", "You declined this request.", detail, true
	case controlplane.ReasonRejectedByAgent:
		if q, isQ := controlplane.IsQuestion(text); isQ {
			return "our_team", "Sent back to the assistant", "Our team sent this back to the assistant with a question: " + clause(q),
				"Nothing has changed. The assistant will come back to you.", true
		}
		headline = "Our team declined this request."
		if text != "" {
			headline = "Our team declined this request: " + clause(text)
		}
		return "our_team", "Declined by our team", headline, "Nothing has changed. Ask the assistant what we can do instead, or to put you through to a person.", true
	case controlplane.ReasonConfirmationExpired:
		return "nobody", "Expired", "Nobody confirmed this in time, so it expired and nothing has changed.",
			"If you still want it, ask the assistant to prepare it again.", true
	case controlplane.ReasonApprovalExpired:
		return "nobody", "Expired", "Our team did not decide on this in time, so it expired and nothing has changed.",
			"If you still want it, ask the assistant to prepare it again.", true
	}
	return "", "", "", "", false
}

// clause ends a person's words with one full stop (or their own ? or !).
func clause(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}

// stoppedBy is who paused or cancelled the task before inv could leave, as
// the audit trail recorded it: the pause or cancellation that lists inv
// among the requests it stopped, else (the request was approved while the
// task was already paused) the last one before inv's not-dispatched event.
// Empty when the trail does not say.
func (h *Handler) stoppedBy(ctx context.Context, inv controlplane.Invocation) controlplane.ActorKind {
	if inv.State != controlplane.NotDispatched ||
		(inv.NotDispatchedReason != controlplane.ReasonTaskPaused && inv.NotDispatchedReason != controlplane.ReasonTaskCancelled) {
		return ""
	}
	events, err := h.cfg.Control.Timeline(ctx, inv.TaskID)
	if err != nil {
		h.Log.Warn("who stopped the task", "invocation_id", inv.ID, "error", err)
		return ""
	}
	var before controlplane.ActorKind
	seen := false
	for _, e := range events {
		if e.Action != controlplane.EventTaskPaused && e.Action != controlplane.EventTaskCancelled {
			if e.Action == controlplane.EventInvocationNotDispatched && e.InvocationID == inv.ID {
				seen = true
			}
			continue
		}
		stopped, _ := e.Data["not_dispatched"].([]any)
		withdrawn, _ := e.Data[controlplane.DataWithdrawnIDs].([]any)
		for _, id := range append(stopped, withdrawn...) {
			if id == inv.ID {
				return e.ActorKind
			}
		}
		if !seen {
			before = e.ActorKind
		}
	}
	if seen {
		return before
	}
	return ""
}

// customerStatusNow is customerStatus with what only the audit trail
// knows: who stopped the work a request was part of.
func (h *Handler) customerStatusNow(ctx context.Context, f customerFrame, inv controlplane.Invocation, successor string) views.CustomerStatusView {
	st := customerStatus(inv, h.cfg.Control.ActionSpec(inv.System, inv.Action), f, successor)
	if by := h.stoppedBy(ctx, inv); by != "" {
		st.Detail, st.DecidedBy = customerStopped(by, inv), customerActorWord(by)
	}
	return st
}

// customerStopped says who stopped the conversation a request came from,
// in the customer's words: before it was decided (a withdrawn request) or
// before it could be carried out.
func customerStopped(by controlplane.ActorKind, inv controlplane.Invocation) string {
	r := inv.NotDispatchedReason
	verb := "paused"
	if r == controlplane.ReasonTaskCancelled {
		verb = "cancelled"
	}
	who := map[controlplane.ActorKind]string{controlplane.ActorUser: "Our team", controlplane.ActorCustomer: "You",
		controlplane.ActorAssistant: "The assistant"}[by]
	if who == "" {
		return customerReason(r)
	}
	if inv.Withdrawn() {
		return who + " cancelled the conversation this came from before it was decided. Ask the assistant if you still want it."
	}
	return who + " " + verb + " the conversation this came from before we could carry it out. Ask the assistant if you still want it."
}

// customerActorWord is the decided-by mark of an actor on a customer's
// page.
func customerActorWord(by controlplane.ActorKind) string {
	switch by {
	case controlplane.ActorUser:
		return "our_team"
	case controlplane.ActorCustomer:
		return "you"
	case controlplane.ActorAssistant:
		return "assistant"
	}
	return "system"
}
