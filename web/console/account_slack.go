package console

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// handleSlackAccount answers GET /account/slack: the Slack accounts linked
// to this one, and the form that takes a code the bot sent in Slack.
func (h *Handler) handleSlackAccount(c echo.Context) error {
	v, err := h.slackView(c)
	if err != nil {
		return err
	}
	return kit.Render(c, http.StatusOK, views.SlackAccount(h.Page(c, title("slack", nil)), v))
}

// handleSlackLink answers POST /account/slack: a right code links the
// Slack user it was sent to with this account (once; it expires); a wrong
// one re-renders the form (422), too many wrong ones are throttled (429
// with Retry-After), and one whose Slack user is linked to another account
// re-renders it saying how to move the link (409): it never moves by itself.
func (h *Handler) handleSlackLink(c echo.Context) error {
	if h.cfg.Slack == nil {
		return refusal(apperr.NotFound, "slack_off", nil)
	}
	u, _ := kit.CurrentUser(c)
	_, err := h.cfg.Slack.Redeem(c.Request().Context(), u.ID, c.FormValue("code"))
	if e, ok := apperr.As(err); ok && (e.Kind == apperr.Invalid || e.Kind == apperr.LimitReached || e.Kind == apperr.Conflict) {
		v, verr := h.slackView(c)
		if verr != nil {
			return verr
		}
		v.Errors = views.FieldErrors(e.Fields)
		if e.Kind == apperr.LimitReached {
			v.Errors = views.FieldErrors{"code": e.Message}
			c.Response().Header().Set("Retry-After", itoa(e.RetryAfterSeconds))
		}
		return kit.Render(c, kit.StatusOf[e.Kind], views.SlackAccount(h.Page(c, title("slack", nil)), v))
	}
	if err != nil {
		return err
	}
	msg := locale.Console("console.flash.slack_linked", nil)
	if u.Role != accounts.Agent {
		msg = locale.Console("console.flash.slack_linked_by_policy", nil)
	}
	kit.SetFlash(c, msg, false)
	return kit.SeeOther(c, "/account/slack")
}

// handleSlackUnlink answers POST /account/slack/unlink: one of the Slack
// accounts linked to this one (team, user) is linked no more.
func (h *Handler) handleSlackUnlink(c echo.Context) error {
	if h.cfg.Slack == nil {
		return refusal(apperr.NotFound, "slack_off", nil)
	}
	u, _ := kit.CurrentUser(c)
	if err := h.cfg.Slack.Unlink(c.Request().Context(), u.ID, c.FormValue("team"), c.FormValue("user")); err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.slack_unlinked", nil), false)
	return kit.SeeOther(c, "/account/slack")
}

// handleSlackEmailMatch answers POST /admin/slack/email-match: an admin
// turns linking by confirmed e-mail address on (on=1) or off.
func (h *Handler) handleSlackEmailMatch(c echo.Context) error {
	if h.cfg.Slack == nil {
		return refusal(apperr.NotFound, "slack_off", nil)
	}
	u, _ := kit.CurrentUser(c)
	on := c.FormValue("on") == "1"
	if err := h.cfg.Slack.SetEmailMatch(c.Request().Context(), u, on); err != nil {
		return err
	}
	msg := locale.Console("console.flash.slack_email_links_off", nil)
	if on {
		msg = locale.Console("console.flash.slack_email_links_on", nil)
	}
	kit.SetFlash(c, msg, false)
	return kit.SeeOther(c, "/account/slack")
}

func (h *Handler) slackView(c echo.Context) (views.SlackAccountView, error) {
	u, _ := kit.CurrentUser(c)
	v := views.SlackAccountView{Enabled: h.cfg.Slack != nil, CanDecide: u.Role == accounts.Agent, Admin: u.Role == accounts.Admin,
		Errors: views.FieldErrors{}}
	if h.cfg.Slack == nil {
		return v, nil
	}
	ctx := c.Request().Context()
	match, err := h.cfg.Slack.EmailMatch(ctx)
	if err != nil {
		return v, err
	}
	v.EmailMatch = match
	links, err := h.cfg.Slack.Links(ctx, u.ID)
	if err != nil {
		return v, err
	}
	for _, l := range links {
		how := say("console.labels.slack.with_code", nil)
		if l.How == "email" {
			how = say("console.labels.slack.by_email", nil)
		}
		v.Links = append(v.Links, views.SlackLinkView{Team: l.Team, User: l.User, Who: l.Team + "/" + l.User, How: how,
			When: l.LinkedAt.UTC().Format("January 2, 2006")})
	}
	return v, nil
}
