package console

import (
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/locale"
	"countersign/web/kit"
)

// handleGlobalStop answers POST /controls/global-stop (admins): stopped=true
// stops every permit in the installation; false lifts it.
func (h *Handler) handleGlobalStop(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	stopped := c.FormValue("stopped") == "true"
	if err := h.cfg.Control.SetGlobalStop(c.Request().Context(), actorOf(c, u), stopped); err != nil {
		return err
	}
	msg := locale.Console("console.flash.global_stop_lifted", nil)
	if stopped {
		msg = locale.Console("console.flash.global_stop_on", nil)
	}
	kit.SetFlash(c, msg, stopped)
	back := c.FormValue("back")
	if !strings.HasPrefix(back, "/tasks/") || !kit.LocalPath(back) {
		back = "/tasks"
	}
	return kit.SeeOther(c, back)
}
