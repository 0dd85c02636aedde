// Package slackhook is the console's address for Slack: the interactivity
// request URL that Slack posts clicks on the cards' messages to. It is its
// own audience, apart from the assistant's API (which must not serve it)
// and the staff's pages: a request here carries no session and no CSRF
// token, only Slack's signature over its body, which internal/slackbot
// checks before reading anything.
package slackhook

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/slackbot"
	"countersign/web/kit"
)

// InteractionsPath is the interactivity request URL's path.
const InteractionsPath = "/slack/interactions"

// Handler answers Slack.
type Handler struct {
	*kit.Site
	bot *slackbot.Bot
}

// New builds the handler; a nil bot (Slack not configured) answers 404.
func New(site *kit.Site, bot *slackbot.Bot) *Handler { return &Handler{Site: site, bot: bot} }

// Routes lists Slack's address: public, its requests signed.
func (h *Handler) Routes() []kit.Route {
	return []kit.Route{kit.POST(InteractionsPath, h.handleInteraction, kit.SignedBody)}
}

// handleInteraction answers POST /slack/interactions: a signed click or a
// modal's submission. Errors are answered as JSON, never as a page: the
// reader is Slack.
func (h *Handler) handleInteraction(c echo.Context) error {
	if h.bot == nil {
		return h.answer(c, apperr.New(apperr.NotFound, "Slack is not connected to this console."))
	}
	reply, err := h.bot.HandleInteraction(c.Request().Context(), c.Request().Header, kit.RawBody(c))
	if err != nil {
		return h.answer(c, err)
	}
	if reply.Body != nil {
		return c.JSON(reply.Status, reply.Body)
	}
	return c.NoContent(reply.Status)
}

func (h *Handler) answer(c echo.Context, err error) error {
	status, body := kit.Describe(err)
	if status >= http.StatusInternalServerError {
		h.Log.Error("slack interaction", "error", err)
	}
	return c.JSON(status, body)
}
