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
		return factorsOff
	}
	ctx := c.Request().Context()
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		return apperr.New(apperr.NotFound, "No such user.")
	}
	person, err := h.Accounts.User(ctx, id)
	if err != nil {
		return err
	}
	admin, _ := kit.CurrentUser(c)
	path := "/admin/users/" + strconv.FormatInt(id, 10) + "/factors/reset"
	if !confirmed(c) {
		return h.renderConfirm(c, title("reset_factor", nil), views.AdminConfirmView{
			Heading: "Reset the second factor of " + person.Name + "?",
			Ends: []string{"Every authenticator app, passkey and recovery code of " + person.Name + " is removed; none of them works again.",
				person.Name + " is signed out everywhere at once.",
				"At their next sign-in " + person.Name + " signs in with their password alone, or, if their role needs a second factor, sets a new one up first.",
				"The audit trail records that you did it."},
			Action: path, Button: "Reset the second factor of " + person.Name, Back: "/admin/users"})
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
