package console

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// factorsOff answers the factor pages of a console without a factor key.
func factorsOff() *apperr.Error { return refusal(apperr.NotFound, "factors_off", nil) }

// handleAccountFactors answers GET /account/factors: whether the person has
// an authenticator app and how many recovery codes are left.
func (h *Handler) handleAccountFactors(c echo.Context) error {
	return h.renderAccountFactors(c, http.StatusOK, nil)
}

// renderAccountFactors shows the person's second-factor page with errs,
// the password check's problem, if any.
func (h *Handler) renderAccountFactors(c echo.Context, status int, errs views.FieldErrors) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	ctx := c.Request().Context()
	u, _ := kit.CurrentUser(c)
	st, err := h.cfg.Factors.StatusOf(ctx, u.ID)
	if err != nil {
		return err
	}
	required, err := h.cfg.Factors.RequiredRoles(ctx)
	if err != nil {
		return err
	}
	v := views.AccountFactorsView{TOTP: st.TOTP, RecoveryLeft: st.RecoveryLeft, Required: required[u.Role], Errors: errs,
		Recovery: st.Any()}
	if v.NewCodes, err = h.takeNewCodes(c, u.ID); err != nil {
		return err
	}
	pp, err := h.providerProofOf(c, u)
	if err != nil {
		return err
	}
	v.Provider, v.ProviderFresh, v.ConfirmURL = pp.Provider, pp.Fresh, confirmPath+"?next=/account/factors"
	if v.PasskeysOn = h.cfg.Factors.PasskeysOn(); v.PasskeysOn {
		if v.Passkeys, err = h.passkeyRows(c, u); err != nil {
			return err
		}
	}
	if st.TOTP {
		v.Since = st.Since.In(h.Now().Location()).Format("2 Jan 2006")
	}
	return kit.Render(c, status, views.AccountFactors(h.Page(c, title("second_factor", nil)), v))
}

// passwordAgain checks the password the form carries before a change to
// how the person signs in; when it answered (a wrong password, too many
// attempts) it reports true with the page's error.
func (h *Handler) passwordAgain(c echo.Context) (bool, error) {
	u, _ := kit.CurrentUser(c)
	err := h.Accounts.ConfirmPassword(c.Request().Context(), u.ID, c.FormValue("password"), c.RealIP())
	e, ok := apperr.As(err)
	switch {
	case err == nil:
		return false, nil
	case ok && e.Kind == apperr.Invalid:
		return true, h.renderAccountFactors(c, http.StatusUnprocessableEntity, e.Fields)
	case ok && e.Kind == apperr.LimitReached:
		if e.RetryAfterSeconds > 0 {
			c.Response().Header().Set("Retry-After", itoa(e.RetryAfterSeconds))
		}
		return true, h.renderAccountFactors(c, http.StatusTooManyRequests, views.FieldErrors{"password": e.Message})
	}
	return true, err
}

// handleAccountTOTPStart answers POST /account/factors/totp: after the
// person's password again, a new key for an authenticator app, shown once.
func (h *Handler) handleAccountTOTPStart(c echo.Context) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	if answered, err := h.passwordAgain(c); answered {
		return err
	}
	u, _ := kit.CurrentUser(c)
	e, err := h.cfg.Factors.StartTOTP(c.Request().Context(), u)
	if ae, ok := apperr.As(err); ok && ae.Kind == apperr.Conflict {
		kit.SetFlash(c, ae.Message+" "+ae.Hint, true)
		return kit.SeeOther(c, "/account/factors")
	}
	if err != nil {
		return err
	}
	return kit.Render(c, http.StatusOK, views.FactorEnrol(h.Page(c, title("enrol_app", nil)), views.FactorEnrolView{
		QR: e.QR, URI: e.URI, Secret: e.Secret, Action: "/account/factors/totp/confirm", Restart: "/account/factors/totp"}))
}

// handleAccountTOTPConfirm answers POST /account/factors/totp/confirm: a
// code of the new key confirms it, and the recovery codes are shown once.
func (h *Handler) handleAccountTOTPConfirm(c echo.Context) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	u, _ := kit.CurrentUser(c)
	codes, err := h.cfg.Factors.ConfirmTOTP(c.Request().Context(), u, identificationOf(c, u), c.FormValue("code"))
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		return kit.Render(c, http.StatusUnprocessableEntity, views.FactorEnrol(h.Page(c, title("enrol_app", nil)),
			views.FactorEnrolView{Action: "/account/factors/totp/confirm", Restart: "/account/factors/totp", Errors: e.Fields}))
	}
	if err != nil {
		return err
	}
	h.Log.Info("authenticator app set up", "user_id", u.ID)
	return h.renderRecoveryCodes(c, codes, "/account/factors")
}

// handleAccountRecoveryCodes answers POST /account/factors/recovery: after
// the person's password again, new recovery codes replace the old ones.
func (h *Handler) handleAccountRecoveryCodes(c echo.Context) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	ctx := c.Request().Context()
	u, _ := kit.CurrentUser(c)
	st, err := h.cfg.Factors.StatusOf(ctx, u.ID)
	if err != nil {
		return err
	}
	if !st.Any() {
		kit.SetFlash(c, locale.Console("console.flash.recovery_needs_factor", nil), true)
		return kit.SeeOther(c, "/account/factors")
	}
	if answered, err := h.passwordAgain(c); answered {
		return err
	}
	codes, err := h.cfg.Factors.NewRecoveryCodes(ctx, u, identificationOf(c, u))
	if err != nil {
		return err
	}
	return h.renderRecoveryCodes(c, codes, "/account/factors")
}

// handleAccountTOTPRemove answers POST /account/factors/totp/remove: after
// the person's password again, their authenticator app goes (to replace
// it: remove, then set up the new one), unless it is the last factor
// their role requires (the page then says so).
func (h *Handler) handleAccountTOTPRemove(c echo.Context) error {
	if h.cfg.Factors == nil {
		return factorsOff()
	}
	if answered, err := h.passwordAgain(c); answered {
		return err
	}
	u, _ := kit.CurrentUser(c)
	err := h.cfg.Factors.RemoveTOTP(c.Request().Context(), u, identificationOf(c, u))
	if e, ok := apperr.As(err); ok && (e.Kind == apperr.Conflict || e.Kind == apperr.NotFound) {
		kit.SetFlash(c, strings.TrimSpace(e.Message+" "+e.Hint), true)
		return kit.SeeOther(c, "/account/factors")
	}
	if err != nil {
		return err
	}
	h.Log.Info("authenticator app removed", "user_id", u.ID)
	kit.SetFlash(c, locale.Console("console.flash.totp_removed", nil), false)
	return kit.SeeOther(c, "/account/factors")
}

// keyNewCodes is the session key of recovery codes made with a person's
// first passkey, sealed (factors.Service.SealCodes) until the account
// page shows them once.
const keyNewCodes = "new_recovery_codes"

// keepNewCodes carries codes in the session to the account page.
func (h *Handler) keepNewCodes(c echo.Context, userID int64, codes []string) error {
	if len(codes) == 0 {
		return nil
	}
	sess := kit.Session(c)
	sess.Values[keyNewCodes] = h.cfg.Factors.SealCodes(userID, codes)
	kit.MarkDirty(sess)
	return sess.Save(c.Request(), c.Response())
}

// takeNewCodes reads and forgets the codes keepNewCodes carried.
func (h *Handler) takeNewCodes(c echo.Context, userID int64) ([]string, error) {
	sess := kit.Session(c)
	sealed, ok := sess.Values[keyNewCodes].([]byte)
	if !ok {
		return nil, nil
	}
	delete(sess.Values, keyNewCodes)
	kit.MarkDirty(sess)
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return nil, err
	}
	return h.cfg.Factors.OpenCodes(userID, sealed)
}
