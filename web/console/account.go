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

// handlePasswordForm answers GET /account/password.
func (h *Handler) handlePasswordForm(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	issuer, err := h.managedBy(c, u.ID)
	if err != nil {
		return err
	}
	p := h.Page(c, title("change_password", nil))
	// A provider's account has no console password for an app's set-up,
	// and its provider keeps its sign-in's factor: its factor page is
	// for passkeys alone, confirmed by a new sign-in at the provider.
	factors := h.offersFactors(c) && (issuer == "" || h.cfg.Factors.PasskeysOn())
	return kit.Render(c, http.StatusOK, views.Password(p, views.PasswordForm{Factors: factors, ManagedBy: issuer}))
}

// handlePasswordChange answers POST /account/password: every other session
// of the user ends; this one stays. Wrong current passwords are throttled
// like sign-ins (429 with the form and Retry-After).
func (h *Handler) handlePasswordChange(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	// An account the OpenID provider manages has a password nobody
	// knows; the page says where the person's password lives instead.
	if issuer, err := h.managedBy(c, u.ID); err != nil || issuer != "" {
		if err != nil {
			return err
		}
		return kit.Render(c, http.StatusConflict, views.Password(h.Page(c, title("change_password", nil)),
			views.PasswordForm{ManagedBy: issuer}))
	}
	sess := kit.Session(c)
	err := h.Accounts.ChangePassword(c.Request().Context(), u.ID, c.FormValue("current"), c.FormValue("new"),
		kit.HashID(sess.ID), c.RealIP())
	if e, ok := apperr.As(err); ok && (e.Kind == apperr.Invalid || e.Kind == apperr.LimitReached) {
		p := h.Page(c, title("change_password", nil))
		fields := e.Fields
		if e.Kind == apperr.LimitReached {
			fields = map[string]string{"current": e.Message}
			if e.RetryAfterSeconds > 0 {
				c.Response().Header().Set("Retry-After", itoa(e.RetryAfterSeconds))
			}
		}
		return kit.Render(c, kit.StatusOf[e.Kind], views.Password(p, views.PasswordForm{Errors: fields, Factors: h.offersFactors(c)}))
	}
	if err != nil {
		return err
	}
	kit.SetFlash(c, locale.Console("console.flash.password_changed", nil), false)
	return kit.SeeOther(c, "/")
}

// offersFactors reports whether the signed-in person may set up a second
// factor here: staff, on a console with a factor key.
func (h *Handler) offersFactors(c echo.Context) bool {
	u, ok := kit.CurrentUser(c)
	return ok && h.cfg.Factors != nil && u.Role != accounts.Customer
}
