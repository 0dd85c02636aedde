package web

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/views"
)

// rejectReasons are the preset reasons an agent picks from; "other" takes
// their own words.
var rejectReasons = []string{
	"The amount is not supported by the order or the conversation.",
	"The customer is not eligible under our policy.",
	"This needs a person to handle the case.",
	"It duplicates an earlier request.",
}

// handleQueueCard answers GET /queue/:id: one card opened for deciding,
// with the decision forms, the edit form generated from the action's
// schema and, after an edit, the diff against the proposal.
func (s *Server) handleQueueCard(c echo.Context) error {
	v, err := s.decideView(c, c.Param("id"), nil)
	if err != nil {
		return err
	}
	return s.renderDecide(c, http.StatusOK, v)
}

func (s *Server) renderDecide(c echo.Context, status int, v views.DecideView) error {
	p, err := s.page(c, v.Card.Quote.Title)
	if err != nil {
		return err
	}
	if c.Request().Header.Get("HX-Request") == "true" {
		return render(c, status, views.DecisionPanel(p, v))
	}
	return render(c, status, views.Decide(p, v))
}

// decideView builds the page of one card; posted, when set, refills the
// edit form with what the user typed.
func (s *Server) decideView(c echo.Context, id string, posted url.Values) (views.DecideView, error) {
	ctx := c.Request().Context()
	u, _ := currentUser(c)
	card, err := s.cfg.Control.Card(ctx, id)
	if err != nil {
		return views.DecideView{}, err
	}
	inv := card.Invocation
	v := views.DecideView{Card: s.cardView(ctx, card, u, policyCache{}), Decidable: inv.State == controlplane.AwaitingApproval,
		Reasons: rejectReasons, Errors: views.FieldErrors{}, Reason: rejectReasons[0]}
	if len(card.FirstApprovers) > 0 {
		current, err := s.cfg.Control.FirstApprovers(ctx, inv)
		if err != nil {
			return v, err
		}
		v.Card.FirstApprovers = nil
		for _, uid := range current {
			if user, err := s.cfg.Accounts.User(ctx, uid); err == nil {
				v.Card.FirstApprovers = append(v.Card.FirstApprovers, user.Name)
			}
		}
	}
	_, spec, err := s.cfg.Registry.Action(inv.System, inv.Action)
	if err != nil {
		return v, err
	}
	args := inv.Args.Approved
	if args == nil {
		args = inv.Args.Proposed
	}
	v.Edit = editFields(spec.Params, argsMap(args), posted, "arg.")
	if inv.Args.Approved != nil && string(inv.Args.Approved) != string(inv.Args.Proposed) {
		before, err := s.cfg.Control.ProposedQuote(ctx, inv)
		if err != nil {
			return v, err
		}
		v.Diff = &views.DiffView{Args: argChanges(inv.Args.Proposed, inv.Args.Approved), Before: quoteView(before, nil),
			After: quoteView(inv.Quote, changedLines(before, inv.Quote))}
	}
	return v, nil
}

func expectedVersion(c echo.Context) int32 {
	n, _ := strconv.ParseInt(c.FormValue("expected_version"), 10, 32)
	return int32(n)
}

// decided answers a decision that was recorded: the fragment for htmx, a
// flash and the queue otherwise.
func (s *Server) decided(c echo.Context, id, outcome string) error {
	if c.Request().Header.Get("HX-Request") == "true" {
		v, err := s.decideView(c, id, nil)
		if err != nil {
			return err
		}
		v.Outcome = outcome
		return s.renderDecide(c, http.StatusOK, v)
	}
	setFlash(c, outcome, false)
	return seeOther(c, "/queue")
}

// decisionFailed answers a refused decision. Without htmx the error page
// says why (409, 403). htmx does not swap error responses, so it gets the
// decision panel as it stands now, with the refusal in words at the top.
func (s *Server) decisionFailed(c echo.Context, id string, err error) error {
	e, ok := apperr.As(err)
	if !ok || c.Request().Header.Get("HX-Request") != "true" ||
		(e.Kind != apperr.Conflict && e.Kind != apperr.IllegalTransition && e.Kind != apperr.Forbidden) {
		return err
	}
	v, verr := s.decideView(c, id, nil)
	if verr != nil {
		return verr
	}
	v.Outcome, v.OutcomeBad = e.Message, true
	if e.Hint != "" {
		v.Outcome += " " + e.Hint
	}
	return s.renderDecide(c, http.StatusOK, v)
}

// handleQueueApprove answers POST /queue/:id/approve: the approval binds
// to the arguments' hash the approver saw (args_hash); a change since is
// refused. Above the policy's amount it records the first of two
// approvals. Someone else's decision first is a 409 that says what
// happened.
func (s *Server) handleQueueApprove(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := currentUser(c)
	id := c.Param("id")
	if _, err := s.cfg.Control.Invocation(ctx, id); err != nil {
		return err
	}
	hash, err := hex.DecodeString(c.FormValue("args_hash"))
	if err != nil || len(hash) == 0 {
		return apperr.InvalidFields(map[string]string{"args_hash": "the page did not say which arguments you approve; reload it"})
	}
	inv, err := s.cfg.Control.ApproveArgs(ctx, actorOf(u), id, expectedVersion(c), hash)
	if err != nil {
		return s.decisionFailed(c, id, err)
	}
	if inv.State == controlplane.AwaitingApproval {
		return s.decided(c, id, "Your approval is recorded. A second, different person must approve it before it can be sent.")
	}
	return s.decided(c, id, "Approved: "+inv.Quote.Title+". It will be sent once, within the task's limits, and verified.")
}

// handleQueueReject answers POST /queue/:id/reject with a preset reason or
// the agent's own words; the reason goes back to the assistant.
func (s *Server) handleQueueReject(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := currentUser(c)
	id := c.Param("id")
	if _, err := s.cfg.Control.Invocation(ctx, id); err != nil {
		return err
	}
	reason, other := c.FormValue("reason"), strings.TrimSpace(c.FormValue("other"))
	text := reason
	if reason == "other" || reason == "" {
		text = other
	}
	_, err := s.cfg.Control.Reject(ctx, actorOf(u), id, expectedVersion(c), text)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		v, verr := s.decideView(c, id, nil)
		if verr != nil {
			return verr
		}
		v.Reason, v.Other = reason, other
		v.Errors["reason"] = "choose a reason, or choose Other and write it"
		return s.renderDecide(c, http.StatusUnprocessableEntity, v)
	}
	if err != nil {
		return err
	}
	return s.decided(c, id, "Rejected. The assistant sees your reason.")
}

// handleQueueSendBack answers POST /queue/:id/send-back: the request goes
// back to the assistant with a question (see controlplane.SendBack).
func (s *Server) handleQueueSendBack(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := currentUser(c)
	id := c.Param("id")
	if _, err := s.cfg.Control.Invocation(ctx, id); err != nil {
		return err
	}
	question := c.FormValue("question")
	_, err := s.cfg.Control.SendBack(ctx, actorOf(u), id, expectedVersion(c), question)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		v, verr := s.decideView(c, id, nil)
		if verr != nil {
			return verr
		}
		v.Question = question
		v.Errors["question"] = e.Fields["question"]
		return s.renderDecide(c, http.StatusUnprocessableEntity, v)
	}
	if err != nil {
		return err
	}
	return s.decided(c, id, "Sent back to the assistant with your question.")
}

// handleQueueEdit answers POST /queue/:id/edit: the arguments from the
// form generated from the action's schema are re-quoted by the system; the
// card then shows the new quote and its diff, and only that can be
// approved. Invalid values re-render the form (422) with the user's input.
func (s *Server) handleQueueEdit(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := currentUser(c)
	id := c.Param("id")
	inv, err := s.cfg.Control.Invocation(ctx, id)
	if err != nil {
		return err
	}
	_, spec, err := s.cfg.Registry.Action(inv.System, inv.Action)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return err
	}
	errs := views.FieldErrors{}
	args := argsFromForm(spec.Params, form, "arg.", errs)
	if len(errs) == 0 {
		raw, _ := json.Marshal(args)
		_, err = s.cfg.Control.EditArgs(ctx, actorOf(u), id, expectedVersion(c), raw)
		if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
			for k, msg := range e.Fields {
				errs["arg."+k] = msg
			}
			if len(e.Fields) == 0 {
				errs["arg."+spec.Params[0].Name] = e.Message
			}
		} else if err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		v, verr := s.decideView(c, id, form)
		if verr != nil {
			return verr
		}
		v.Errors = errs
		return s.renderDecide(c, http.StatusUnprocessableEntity, v)
	}
	setFlash(c, "Quoted again. Compare the new quote with the proposal, then decide.", false)
	return seeOther(c, "/queue/"+url.PathEscape(id)+"#diff-title")
}
