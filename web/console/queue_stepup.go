package console

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
	"countersign/web/layout"
)

// isStepUpRequired says err is the control plane's refusal of an
// approval for want of a step-up (controlplane.ErrStepUpRequired).
func isStepUpRequired(err error) bool {
	e, ok := apperr.As(err)
	return ok && e.Code == controlplane.ErrStepUpRequired.Code
}

// stepUpRefused answers a plain approval refused for want of a step-up
// (the policy changed while the page was open): the card's page again,
// saying so, with the link to its step-up page; htmx gets the panel.
func (h *Handler) stepUpRefused(c echo.Context, id string, err error) error {
	v, verr := h.decideView(c, id, nil)
	if verr != nil {
		return verr
	}
	e, _ := apperr.As(err)
	v.Outcome, v.OutcomeBad, v.OutcomeStepUp = e.Message, true, true
	status := http.StatusForbidden
	if c.Request().Header.Get("HX-Request") == "true" {
		status = http.StatusOK // htmx swaps only a success
	}
	return h.renderDecide(c, status, v)
}

// handleQueueStepUp answers GET /queue/:id/step-up: what is being
// approved, as the card's page shows it, with the version and arguments
// hash the passkey signs and "Approve with your passkey"; without a
// passkey, how to add one.
func (h *Handler) handleQueueStepUp(c echo.Context) error {
	ctx := c.Request().Context()
	u, _ := kit.CurrentUser(c)
	card, err := h.cfg.Control.Card(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	v := views.StepUpView{Card: h.cardView(ctx, card, u, policyCache{}, cardWhole),
		Decidable: card.State == controlplane.AwaitingApproval}
	switch {
	case h.cfg.Factors == nil || !h.cfg.Factors.PasskeysOn():
		v.PasskeysOff = true
	default:
		keys, err := h.cfg.Factors.Passkeys(ctx, u.ID)
		if err != nil {
			return err
		}
		v.NoPasskey = len(keys) == 0
	}
	return kit.Render(c, http.StatusOK, views.StepUp(h.Page(c, title("step_up", locale.Params{"Title": card.Quote.Title})), v))
}

// stepUpAnswer is what static/passkey.js posts from a step-up page: the
// version and arguments hash the page showed and, at the finish, the
// credential.
type stepUpAnswer struct {
	ExpectedVersion string          `json:"expected_version"`
	ArgsHash        string          `json:"args_hash"`
	Credential      json.RawMessage `json:"credential"`
}

// errStepUpPageOld refuses a step-up whose page showed another version or
// other arguments than the card has now: the person approves what they
// saw, so they see it again first. Its words are the catalogue's when it
// is refused, so an installation's override shows.
func errStepUpPageOld() *apperr.Error {
	return &apperr.Error{Kind: apperr.Conflict, Code: codeStepUpPageOld,
		Message: say("console.rest.step_up.page_old", nil),
		Hint:    say("console.rest.step_up.page_old_hint", nil)}
}

// codeStepUpPageOld is errStepUpPageOld's code.
const codeStepUpPageOld = "step_up_page_old"

// stepUpCard reads the step-up answer and the card it is for, and checks
// the page showed the card as it is now (version and arguments hash).
func (h *Handler) stepUpCard(c echo.Context) (accounts.User, controlplane.Invocation, stepUpAnswer, error) {
	u, _ := kit.CurrentUser(c)
	var a stepUpAnswer
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxPasskeyAnswer))
	if err != nil {
		return u, controlplane.Invocation{}, a, err
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return u, controlplane.Invocation{}, a, apperr.InvalidFields(map[string]string{"passkey": say("console.rest.passkey.unreadable", nil)})
	}
	card, err := h.cfg.Control.Card(c.Request().Context(), c.Param("id"))
	if err != nil {
		return u, controlplane.Invocation{}, a, err
	}
	inv := card.Invocation
	version, verr := strconv.ParseInt(a.ExpectedVersion, 10, 32)
	hash, herr := hex.DecodeString(a.ArgsHash)
	if verr != nil || herr != nil || int32(version) != inv.Version || !bytes.Equal(hash, inv.ArgsHash) {
		return u, inv, a, errStepUpPageOld()
	}
	if inv.State != controlplane.AwaitingApproval {
		return u, inv, a, refusal(apperr.IllegalTransition, "decided_already", locale.Params{"State": layout.StateLabel(inv.State)})
	}
	return u, inv, a, nil
}

// handleQueueStepUpBegin answers POST /queue/:id/step-up/begin: the
// request options of a step-up for the card as it is now, once the page
// is known to show it so, and only for someone the action's policy lets
// decide it (nobody is asked for a passkey in vain; the approval asks
// again).
func (h *Handler) handleQueueStepUpBegin(c echo.Context) error {
	if h.cfg.Factors == nil {
		return stepUpReply(c, factorsOff())
	}
	u, inv, _, err := h.stepUpCard(c)
	if err != nil {
		return stepUpReply(c, err)
	}
	may, p, err := h.cfg.Control.MayDecide(c.Request().Context(), actorOf(c, u), inv.System, inv.Action)
	if err != nil {
		return err
	}
	if !may {
		return stepUpReply(c, &apperr.Error{Kind: apperr.Forbidden, Code: controlplane.CodeRoleMayNotApprove,
			Message: say("console.rest.step_up.role_may_not", locale.Params{"System": inv.System, "Action": inv.Action, "Deciders": decidersWords(p)})})
	}
	cer, err := h.cfg.Factors.BeginStepUp(c.Request().Context(), u, inv.ID, int64(inv.Version), inv.ArgsHash)
	if err != nil {
		return stepUpReply(c, err)
	}
	return h.beginCeremony(c, cer.ID, cer.Options)
}

// handleQueueStepUpApprove answers POST /queue/:id/step-up: the passkey's
// answer is checked against the card as loaded now (its id, version and
// arguments hash, which the page must have shown), and the approval goes
// through the one door with the assertion; then to the queue, as after
// any decision.
func (h *Handler) handleQueueStepUpApprove(c echo.Context) error {
	if h.cfg.Factors == nil {
		return stepUpReply(c, factorsOff())
	}
	sess := kit.Session(c)
	ceremony, _ := sess.Values[keyCeremony].(string)
	delete(sess.Values, keyCeremony)
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	u, inv, a, err := h.stepUpCard(c)
	if err != nil {
		return stepUpReply(c, err)
	}
	ctx := c.Request().Context()
	assertion, err := h.cfg.Factors.FinishStepUp(ctx, u, ceremony, a.Credential, inv.ID, int64(inv.Version), inv.ArgsHash)
	if err != nil {
		return stepUpReply(c, err)
	}
	_, err = h.cfg.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: actorOf(c, u), InvocationID: inv.ID,
		Verb: controlplane.StaffApprove, Version: inv.Version, ArgsHash: inv.ArgsHash, StepUp: &assertion})
	if err != nil {
		return stepUpReply(c, err)
	}
	h.Log.Info("approved with a passkey", "user_id", u.ID, "invocation_id", inv.ID, "version", inv.Version)
	if err := h.cfg.Control.ReleaseCard(ctx, inv.ID, u.ID); err != nil {
		h.Log.Warn("release a decided card", "id", inv.ID, "error", err)
	}
	return c.JSON(http.StatusOK, passkeyReply{Next: "/queue?decided=" + url.QueryEscape(inv.ID)})
}

// stepUpReply answers a refused step-up as JSON for the script (the
// message and hint go to the page's error summary) with the status of
// its kind; a page that is out of date is reloaded after the message.
func stepUpReply(c echo.Context, err error) error {
	e, ok := apperr.As(err)
	if !ok {
		return err
	}
	r := passkeyReply{Error: e.Message}
	if e.Hint != "" {
		r.Error += " " + e.Hint
	}
	if e.Code == codeStepUpPageOld {
		r.Next = views.StepUpPath(c.Param("id"))
	}
	return c.JSON(kit.StatusOf[e.Kind], r)
}
