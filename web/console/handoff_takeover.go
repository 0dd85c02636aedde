package console

import (
	"github.com/labstack/echo/v4"

	"countersign/internal/locale"
	"countersign/web/kit"
)

// handleHandoffTakeOver answers POST /handoffs/:id/take-over (managers):
// the manager takes the conversation over from the person holding it, with
// a reason, recorded and shown on the page (handoffs.Service.TakeOver).
// A missing reason, or someone ending or taking it first, re-renders the
// page with the reason kept.
func (h *Handler) handleHandoffTakeOver(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	id, err := handoffID(c)
	if err != nil {
		return err
	}
	reason := c.FormValue("reason")
	err = h.cfg.Handoffs.TakeOver(c.Request().Context(), actorOf(c, u), id, reason)
	return h.refuseHandoffForm(c, id, err, locale.Console("console.flash.handoff_taken_over", nil),
		"take-over-reason", reason)
}
