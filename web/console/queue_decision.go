package console

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// handleQueueCard answers GET /queue/:id: one card opened for deciding,
// with the decision forms, the edit form generated from the action's
// schema and, after an edit, the diff against the proposal.
func (h *Handler) handleQueueCard(c echo.Context) error {
	v, err := h.decideView(c, c.Param("id"), nil)
	if err != nil {
		return err
	}
	return h.renderDecide(c, http.StatusOK, v)
}

func (h *Handler) renderDecide(c echo.Context, status int, v views.DecideView) error {
	p := h.Page(c, v.Card.Quote.Title)
	if c.Request().Header.Get("HX-Request") == "true" {
		return kit.Render(c, status, views.DecisionPanel(p, v))
	}
	return kit.Render(c, status, views.Decide(p, v))
}

// decideView builds the page of one card; posted, when set, refills the
// edit form with what the user typed.
func (h *Handler) decideView(c echo.Context, id string, posted url.Values) (views.DecideView, error) {
	ctx := c.Request().Context()
	u, _ := kit.CurrentUser(c)
	card, err := h.cfg.Control.Card(ctx, id)
	if err != nil {
		return views.DecideView{}, err
	}
	inv := card.Invocation
	v := views.DecideView{Card: h.cardView(ctx, card, u, policyCache{}, cardWhole), Decidable: inv.State == controlplane.AwaitingApproval,
		Reasons: h.cfg.Control.RejectReasons(inv.System, inv.Action), Errors: views.FieldErrors{}}
	// The system is asked again only for someone who may decide the card.
	if v.Decidable && v.Card.MayDecide {
		if err := h.checkQuote(ctx, card, &v); err != nil {
			return v, err
		}
	}
	if len(card.FirstApprovers) > 0 {
		current, err := h.cfg.Control.FirstApprovers(ctx, inv)
		if err != nil {
			return v, err
		}
		v.Card.FirstApprovers = nil
		for _, uid := range current {
			if user, err := h.Accounts.User(ctx, uid); err == nil {
				v.Card.FirstApprovers = append(v.Card.FirstApprovers, user.Name)
			}
		}
	}
	_, spec, err := h.cfg.Registry.Action(inv.System, inv.Action)
	if err != nil {
		return v, err
	}
	args := inv.Args.Approved
	if args == nil {
		args = inv.Args.Proposed
	}
	v.Edit = editFields(spec.Params, argsMap(args), posted, "arg.", inv.Quote.Currency)
	if inv.Args.Approved != nil && string(inv.Args.Approved) != string(inv.Args.Proposed) {
		before, err := h.cfg.Control.ProposedQuote(ctx, inv)
		if err != nil {
			return v, err
		}
		v.Diff = &views.DiffView{Args: argChanges(inv.Args.Proposed, inv.Args.Approved, inv.Quote.Currency), Before: quoteView(before, nil),
			After: quoteView(inv.Quote, changedLines(before, inv.Quote))}
	}
	return v, nil
}

func expectedVersion(c echo.Context) int32 {
	n, _ := strconv.ParseInt(c.FormValue("expected_version"), 10, 32)
	return int32(n)
}

// checkQuote dry-runs the card again (read-only) when it is opened: when
// the object changed since the card's quote, the page shows the quote now
// with what differs, says what moved, and offers to quote again instead of
// approving the out-of-date quote. A check that cannot be made says so
// and leaves the decision to the agent (the permit still refuses a changed
// object).
func (h *Handler) checkQuote(ctx context.Context, card controlplane.QueueCard, v *views.DecideView) error {
	changes, err := h.cfg.Control.TargetChanges(ctx, []string{card.ID})
	if err != nil {
		return err
	}
	v.Card.Stale = staleSentences(changes[card.ID], card.Target.Kind)
	now := clock(h.Now())
	fresh, changed, err := h.cfg.Control.FreshQuote(ctx, card.Invocation)
	switch {
	case err != nil:
		e, ok := apperr.As(err)
		if !ok || e.Kind != apperr.Invalid {
			// The system could not be asked: say so, and leave the decision
			// to the agent (a changed object is still refused at dispatch).
			v.Checked, v.CheckBad = say("console.words.decide.check_no_answer", locale.Params{"At": now}), true
			break
		}
		v.Checked, v.CheckBad, v.Refused = say("console.words.decide.check_refused", locale.Params{"At": now, "Message": e.Message}), true, true
	case changed:
		v.Checked, v.CheckBad = say("console.words.decide.check_changed", locale.Params{"At": now, "Kind": card.Target.Kind}), true
		fv := quoteView(fresh, changedLines(card.Quote, fresh))
		v.Fresh, v.NeedsRequote = &fv, true
		if len(v.Card.Stale) == 0 {
			v.Card.Stale = []string{say("console.words.decide.changed_outside", locale.Params{"Kind": card.Target.Kind, "System": card.System})}
		}
	default:
		v.Checked = say("console.words.decide.check_holds", locale.Params{"At": now})
		v.Card.Stale = nil
	}
	return nil
}

// decided answers a decision that was recorded: the agent holds the card
// no longer, and the queue shows it in its state now (one badge, one
// sentence) with the focus on the next card. htmx is told to load that
// same page, so with and without JavaScript the agent sees one truth.
func (h *Handler) decided(c echo.Context, id string) error {
	u, _ := kit.CurrentUser(c)
	if err := h.cfg.Control.ReleaseCard(c.Request().Context(), id, u.ID); err != nil {
		h.Log.Warn("release a decided card", "id", id, "error", err)
	}
	to := "/queue?decided=" + url.QueryEscape(id)
	if c.Request().Header.Get("HX-Request") == "true" {
		c.Response().Header().Set("HX-Redirect", to)
		return c.NoContent(http.StatusOK)
	}
	return kit.SeeOther(c, to)
}

// decidedView is the card just decided as it stands now.
func (h *Handler) decidedView(ctx context.Context, id string, u accounts.User) (*views.DecidedView, error) {
	card, err := h.cfg.Control.Card(ctx, id)
	if apperr.Is(err, apperr.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	inv := card.Invocation
	d := &views.DecidedView{ID: inv.ID, TaskID: inv.TaskID, Title: inv.Quote.Title, State: layout.StateBadge(inv.State)}
	d.Outcome = decidedOutcome(inv, slices.Contains(card.FirstApprovers, u.ID))
	return d, nil
}

// decidedOutcome is the sentence under a card just decided: where the
// request stands now, approvedByMe when the viewer gave its first of two
// approvals.
func decidedOutcome(inv controlplane.Invocation, approvedByMe bool) string {
	switch inv.State {
	case controlplane.AwaitingApproval:
		if approvedByMe {
			return say("console.words.decided.first_approval", nil)
		}
		return say("console.words.decided.waiting", nil)
	case controlplane.Approved:
		return say("console.words.decided.approved", nil)
	case controlplane.Dispatching:
		return say("console.words.decided.sending", nil)
	case controlplane.Completed:
		return say("console.words.decided.completed", nil)
	case controlplane.Rejected:
		if q, ok := controlplane.IsQuestion(inv.DecisionReason); ok {
			return say("console.words.decided.sent_back", locale.Params{"Question": q})
		}
		return say("console.words.decided.rejected", locale.Params{"Reason": inv.DecisionReason})
	}
	return say("console.words.decided.other", locale.Params{"State": layout.StateLabel(inv.State)})
}

// decisionFailed answers a refused decision. Without htmx the error page
// says why (409, 403). htmx does not swap error responses, so it gets the
// decision panel as it stands now, with the refusal in words at the top.
func (h *Handler) decisionFailed(c echo.Context, id string, err error) error {
	e, ok := apperr.As(err)
	if !ok || c.Request().Header.Get("HX-Request") != "true" ||
		(e.Kind != apperr.Conflict && e.Kind != apperr.IllegalTransition && e.Kind != apperr.Forbidden) {
		return err
	}
	v, verr := h.decideView(c, id, nil)
	if verr != nil {
		return verr
	}
	v.Outcome, v.OutcomeBad = e.Message, true
	if e.Hint != "" {
		v.Outcome += " " + e.Hint
	}
	return h.renderDecide(c, http.StatusOK, v)
}

// staffDecide makes the decision d of the signed-in person on card id,
// on the version the page showed: the control plane reads the request,
// checks who may decide it and transitions, in one call.
func (h *Handler) staffDecide(c echo.Context, id string, d controlplane.StaffDecision) (controlplane.StaffDecided, error) {
	u, _ := kit.CurrentUser(c)
	d.Actor, d.InvocationID, d.Version = actorOf(c, u), id, expectedVersion(c)
	return h.cfg.Control.StaffDecide(c.Request().Context(), d)
}

// handleQueueApprove answers POST /queue/:id/approve: the approval binds
// to the arguments' hash the approver saw (args_hash); a change since is
// refused. Above the policy's amount it records the first of two
// approvals. Someone else's decision first is a 409 that says what
// happened. A card whose policy asks for a passkey (it may have changed
// while the page was open) is refused by the control plane under the
// request's lock (step_up_required): the card's page says so and links
// to its step-up page.
func (h *Handler) handleQueueApprove(c echo.Context) error {
	id := c.Param("id")
	hash, err := hex.DecodeString(c.FormValue("args_hash"))
	if err != nil {
		hash = nil // no hash the page could have shown: the door asks for one
	}
	if _, err := h.staffDecide(c, id, controlplane.StaffDecision{Verb: controlplane.StaffApprove, ArgsHash: hash}); err != nil {
		if isStepUpRequired(err) {
			return h.stepUpRefused(c, id, err)
		}
		return h.decisionFailed(c, id, err)
	}
	return h.decided(c, id)
}

// handleQueueReject answers POST /queue/:id/reject with one of the
// action's preset reasons or the agent's own words: that text is what the
// assistant and the customer read. No reason, Other without words, or a
// reason that is not one of this action's is a field error (422).
func (h *Handler) handleQueueReject(c echo.Context) error {
	id := c.Param("id")
	reason, other := c.FormValue("reason"), c.FormValue("other")
	out, err := h.staffDecide(c, id, controlplane.StaffDecision{Verb: controlplane.StaffReject, Reason: reason, Other: other})
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid && out.Invocation.ID != "" {
		v, verr := h.decideView(c, id, nil)
		if verr != nil {
			return verr
		}
		v.Reason, v.Other = reason, strings.TrimSpace(other)
		v.Errors["reason"] = e.Fields["reason"]
		return h.renderDecide(c, http.StatusUnprocessableEntity, v)
	}
	if err != nil {
		return err
	}
	return h.decided(c, id)
}

// handleQueueSendBack answers POST /queue/:id/send-back: the request goes
// back to the assistant with a question (see controlplane.StaffSendBack).
func (h *Handler) handleQueueSendBack(c echo.Context) error {
	id := c.Param("id")
	question := c.FormValue("question")
	out, err := h.staffDecide(c, id, controlplane.StaffDecision{Verb: controlplane.StaffSendBack, Reason: question})
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid && out.Invocation.ID != "" {
		v, verr := h.decideView(c, id, nil)
		if verr != nil {
			return verr
		}
		v.Question = question
		v.Errors["question"] = e.Fields["question"]
		return h.renderDecide(c, http.StatusUnprocessableEntity, v)
	}
	if err != nil {
		return err
	}
	return h.decided(c, id)
}

// handleQueueEdit answers POST /queue/:id/edit: the arguments from the
// form generated from the action's schema are re-quoted by the system; the
// card then shows the new quote and its diff, and only that can be
// approved. Invalid values re-render the form (422) with the user's input.
func (h *Handler) handleQueueEdit(c echo.Context) error {
	id := c.Param("id")
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	out, err := h.staffDecide(c, id, controlplane.StaffDecision{Verb: controlplane.StaffEdit,
		FormArgs: func(inv controlplane.Invocation) (json.RawMessage, error) { return h.formArgs(inv, form) }})
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.Invalid || out.Invocation.ID == "" {
		if err != nil {
			return err
		}
		kit.SetFlash(c, locale.Console("console.flash.quoted_again_compare", nil), false)
		return kit.SeeOther(c, "/queue/"+url.PathEscape(id)+"#diff-title")
	}
	errs := views.FieldErrors{}
	for k, msg := range e.Fields {
		errs["arg."+k] = msg
	}
	if len(e.Fields) == 0 {
		inv := out.Invocation
		_, spec, err := h.cfg.Registry.Action(inv.System, inv.Action)
		if err != nil {
			return err
		}
		errs["arg."+spec.Params[0].Name] = e.Message
	}
	v, verr := h.decideView(c, id, form)
	if verr != nil {
		return verr
	}
	v.Errors = errs
	return h.renderDecide(c, http.StatusUnprocessableEntity, v)
}

// formArgs makes an edit's arguments from the form generated from the
// action of inv (the request as the control plane loaded it); what cannot
// be read is a field error, named without the form's "arg." prefix.
func (h *Handler) formArgs(inv controlplane.Invocation, form url.Values) (json.RawMessage, error) {
	_, spec, err := h.cfg.Registry.Action(inv.System, inv.Action)
	if err != nil {
		return nil, err
	}
	errs := views.FieldErrors{}
	args := argsFromForm(spec.Params, form, "arg.", inv.Quote.Currency, errs)
	if len(errs) > 0 {
		fields := map[string]string{}
		for k, msg := range errs {
			fields[strings.TrimPrefix(k, "arg.")] = msg
		}
		return nil, apperr.InvalidFields(fields)
	}
	return json.Marshal(args)
}

// handleQueueRequote answers POST /queue/:id/requote: a card whose quote
// went out of date is quoted again with the same arguments (an edit that
// changes nothing but the quote), so what the agent approves is what the
// system says now.
func (h *Handler) handleQueueRequote(c echo.Context) error {
	id := c.Param("id")
	if _, err := h.staffDecide(c, id, controlplane.StaffDecision{Verb: controlplane.StaffRequote}); err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.quoted_again", locale.Params{"Time": clock(h.Now())}), false)
	return kit.SeeOther(c, "/queue/"+url.PathEscape(id))
}
