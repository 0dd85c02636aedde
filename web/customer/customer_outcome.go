package customer

import (
	"context"
	"strings"

	"countersign/internal/controlplane"
	"countersign/internal/locale"
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
func customerConsequences(f customerFrame, state controlplane.State, expired bool) views.CustomerConsequencesView {
	if state == controlplane.AwaitingConfirmation && expired {
		state = controlplane.Expired
	}
	words := func(mode, key string) views.CustomerConsequencesView {
		v := views.CustomerConsequencesView{Mode: mode, Heading: f.t("pages.outcome."+key+".heading", nil),
			MoneyLabel: f.t("pages.outcome."+key+".money", nil), EffectiveLabel: f.t("pages.outcome."+key+".effective", nil)}
		if key == "fact" {
			v.MoneyLabel, v.EffectiveLabel = f.t("pages.outcome.money", nil), f.t("pages.outcome.effective", nil)
		}
		return v
	}
	switch state {
	case controlplane.Completed:
		return words(consequencesFact, "fact")
	case controlplane.AwaitingConfirmation:
		return words(consequencesIf, "confirm")
	case controlplane.AwaitingApproval:
		return words(consequencesIf, "approval")
	case controlplane.Proposed, controlplane.Approved, controlplane.Dispatching:
		return words(consequencesIf, "working")
	case controlplane.Unverified, controlplane.Reversed:
		return views.CustomerConsequencesView{Mode: consequencesHidden}
	}
	// Failed, not dispatched, rejected (declined, superseded) and
	// expired: nothing was carried out.
	return views.CustomerConsequencesView{Mode: consequencesWould, Heading: f.t("pages.outcome.would.heading", nil)}
}

// decidedBy says on a customer's page who ended a request that was not
// carried out, and why, from what the invocation recorded: the agent's
// reason as they wrote it "for the assistant and the customer", the
// customer's own decline, a deadline nobody met, or a replaced quote.
// ok is false for a state no one decided against.
func decidedBy(f customerFrame, inv controlplane.Invocation) (by, badge, headline, detail string, ok bool) {
	r := inv.Reason()
	if r == nil || inv.State == controlplane.NotDispatched {
		return "", "", "", "", false
	}
	text := strings.TrimSpace(inv.DecisionReason)
	switch r.Code {
	case controlplane.ReasonSuperseded:
		return "system", f.t("pages.badge.details_changed", nil), f.t("pages.decided.superseded.headline", nil),
			f.t("pages.decided.superseded.detail", nil), true
	case controlplane.ReasonDeclinedByCustomer:
		detail = f.t("pages.decided.declined.detail", nil)
		if text != "" {
			detail = f.t("pages.decided.declined.detail_reason", locale.Params{"Reason": text})
		}
		return "you", f.t("pages.badge.you_declined", nil), f.t("pages.decided.declined.headline", nil), detail, true
	case controlplane.ReasonRejectedByAgent:
		if q, isQ := controlplane.IsQuestion(text); isQ {
			return "our_team", f.t("pages.badge.sent_back", nil), f.t("pages.decided.sent_back.headline", locale.Params{"Question": clause(q)}),
				f.t("pages.decided.sent_back.detail", nil), true
		}
		headline = f.t("pages.decided.team_declined.headline", nil)
		if text != "" {
			headline = f.t("pages.decided.team_declined.headline_reason", locale.Params{"Reason": clause(text)})
		}
		return "our_team", f.t("pages.badge.declined_by_team", nil), headline, f.t("pages.decided.team_declined.detail", nil), true
	case controlplane.ReasonConfirmationExpired:
		return "nobody", f.t("pages.badge.expired", nil), f.t("pages.decided.confirmation_expired.headline", nil),
			f.t("pages.decided.expired.detail", nil), true
	case controlplane.ReasonApprovalExpired:
		return "nobody", f.t("pages.badge.expired", nil), f.t("pages.decided.approval_expired.headline", nil),
			f.t("pages.decided.expired.detail", nil), true
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
		st.Detail, st.DecidedBy = customerStopped(f, by, inv), customerActorWord(by)
	}
	return st
}

// customerStopped says who stopped the conversation a request came from,
// in the customer's words: before it was decided (a withdrawn request) or
// before it could be carried out.
func customerStopped(f customerFrame, by controlplane.ActorKind, inv controlplane.Invocation) string {
	r := inv.NotDispatchedReason
	who := map[controlplane.ActorKind]string{controlplane.ActorUser: "team", controlplane.ActorCustomer: "you",
		controlplane.ActorAssistant: "assistant"}[by]
	if who == "" {
		return customerReason(f, r)
	}
	switch {
	case inv.Withdrawn():
		return f.t("pages.stopped."+who+".withdrawn", nil)
	case r == controlplane.ReasonTaskCancelled:
		return f.t("pages.stopped."+who+".cancelled", nil)
	}
	return f.t("pages.stopped."+who+".paused", nil)
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
