package console

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// handleAdminFactorReset answers POST /admin/users/:id/factors/reset: for
// a person who lost their phone or passkeys, an admin removes every
// second factor and recovery code of theirs and ends their sessions,
// after a confirmation page (a post without confirm=yes gets it). Their
// next sign-in of a role that requires a factor sets one up again. The
// reset is audited (factor.reset, by the admin, naming the person).
func (h *Handler) handleAdminFactorReset(c echo.Context) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	ctx := c.Request().Context()
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return refusal(apperr.NotFound, "no_user", nil)
	}
	person, err := h.Accounts.User(ctx, id)
	if err != nil {
		return err
	}
	admin, _ := kit.CurrentUser(c)
	path := "/admin/users/" + strconv.FormatInt(id, 10) + "/factors/reset"
	if !confirmed(c) {
		named := locale.Params{"Name": person.Name}
		return h.renderConfirm(c, title("reset_factor", nil), views.AdminConfirmView{
			Heading: say("console.rest.confirm.factor.heading", named),
			Ends: []string{say("console.rest.confirm.factor.removed", named),
				say("console.rest.confirm.factor.signed_out", named),
				say("console.rest.confirm.factor.next_sign_in", named),
				say("console.rest.confirm.factor.audited", nil)},
			Action: path, Button: say("console.rest.confirm.factor.button", named), Back: "/admin/users"})
	}
	err = h.cfg.Factors.ResetFactors(ctx, admin, identificationOf(c, admin), person)
	if e, ok := apperr.As(err); ok && (e.Kind == apperr.Invalid || e.Kind == apperr.NotFound) {
		kit.SetFlash(c, e.Message, true)
		return kit.SeeOther(c, "/admin/users")
	}
	if err != nil {
		return err
	}
	h.Log.Info("second factor reset", "by", admin.ID, "user_id", person.ID)
	kit.SetFlash(c, locale.Console("console.flash.factor_reset", locale.Params{"Name": person.Name}), false)
	return kit.SeeOther(c, "/admin/users")
}
