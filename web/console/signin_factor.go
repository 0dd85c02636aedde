package console

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/factors"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// factorWait is how long a right password waits for its second factor; the
// person signs in again after it.
const factorWait = 5 * time.Minute

// holdForFactor is handleSignIn's step after a right password: a person
// who has a second factor, or whose role requires one, gets a session that
// names nobody yet and waits for the factor (kit.HoldForFactor sends every
// page to the factor step). It reports whether it answered.
func (h *Handler) holdForFactor(c echo.Context, user accounts.User, next string) (bool, error) {
	if h.cfg.Factors == nil {
		return false, nil
	}
	step, err := h.cfg.Factors.StepAfterPassword(c.Request().Context(), user)
	if err != nil || step == factors.NoStep {
		return err != nil, err
	}
	sess := kit.Session(c)
	if err := h.Sessions.Regenerate(c.Request().Context(), sess); err != nil {
		return true, err
	}
	delete(sess.Values, kit.KeyIdentifiedBy)
	kit.SetPendingFactor(sess, kit.PendingFactor{UserID: user.ID, By: "password", Until: h.Now().Add(factorWait), Next: next})
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return true, err
	}
	h.Sessions.DropAnonymousCSRF(c.Request(), c.Response())
	h.Log.Info("password right, second factor next", "user_id", user.ID, "enrol", step == factors.EnrolStep)
	return true, kit.SeeOther(c, kit.FactorPath)
}

// pendingUser is the person whose sign-in waits for a factor, or ok false
// when none waits (never did, expired, or the person was disabled since).
func (h *Handler) pendingUser(c echo.Context) (accounts.User, kit.PendingFactor, bool, error) {
	if h.cfg.Factors == nil {
		return accounts.User{}, kit.PendingFactor{}, false, nil
	}
	p, ok := h.PendingFactorOf(c)
	if !ok {
		return accounts.User{}, p, false, nil
	}
	u, err := h.Accounts.User(c.Request().Context(), p.UserID)
	if apperr.Is(err, apperr.NotFound) || (err == nil && u.Disabled()) {
		return accounts.User{}, p, false, nil
	}
	return u, p, err == nil, err
}

// noPendingSignIn answers a factor step without a sign-in waiting: the
// signed-in go home, the others sign in again.
func (h *Handler) noPendingSignIn(c echo.Context) error {
	if _, ok := kit.CurrentUser(c); ok {
		return kit.SeeOther(c, "/")
	}
	if sess := kit.Session(c); sess != nil && !sess.IsNew {
		kit.SetFlash(c, locale.Console("console.flash.signin_code_late", nil), true)
	}
	return kit.SeeOther(c, "/sign-in")
}

// handleFactorForm answers GET /sign-in/factor.
func (h *Handler) handleFactorForm(c echo.Context) error {
	u, _, ok, err := h.pendingUser(c)
	if err != nil {
		return err
	}
	if !ok {
		return h.noPendingSignIn(c)
	}
	step, err := h.cfg.Factors.StepAfterPassword(c.Request().Context(), u)
	if err != nil {
		return err
	}
	v := views.SignInFactorView{Enrol: step == factors.EnrolStep}
	if v.Enrol {
		v.Passkey = h.cfg.Factors.PasskeysOn()
	} else if v, err = h.factorStep(c, u); err != nil {
		return err
	}
	return h.renderFactor(c, http.StatusOK, v)
}

// factorStep is the factor step of u, worded for what u has: an app's
// code, a passkey beside it, or a passkey with recovery codes only.
func (h *Handler) factorStep(c echo.Context, u accounts.User) (views.SignInFactorView, error) {
	st, err := h.cfg.Factors.StatusOf(c.Request().Context(), u.ID)
	v := views.SignInFactorView{TOTP: st.TOTP, Passkey: h.cfg.Factors.PasskeysOn() && st.Passkeys > 0}
	if !v.TOTP && !v.Passkey {
		v.TOTP = true // no factor it can use: a recovery code in the code field
	}
	return v, err
}

// handleFactor answers POST /sign-in/factor: a code of the person's
// authenticator app or a recovery code completes the sign-in; for a
// person setting one up, the first code confirms it and the recovery
// codes are shown once.
func (h *Handler) handleFactor(c echo.Context) error {
	ctx := c.Request().Context()
	u, pending, ok, err := h.pendingUser(c)
	if err != nil {
		return err
	}
	if !ok {
		return h.noPendingSignIn(c)
	}
	code := c.FormValue("code")
	step, err := h.cfg.Factors.StepAfterPassword(ctx, u)
	if err != nil {
		return err
	}
	switch step {
	case factors.NoStep: // the role's requirement was lifted meanwhile
		return h.finishSignIn(c, u, pending.By, pending.Next)
	case factors.EnrolStep:
		codes, err := h.cfg.Factors.ConfirmTOTP(ctx, u, controlplane.Identification{Method: pending.By}, code)
		if e, isApp := apperr.As(err); isApp && e.Kind == apperr.Invalid {
			return h.renderEnrol(c, http.StatusUnprocessableEntity, views.FactorEnrolView{Action: kit.FactorPath,
				Restart: kit.FactorPath + "/enrol", Errors: e.Fields})
		}
		if err != nil {
			return err
		}
		if err := h.signIn(c, u, pending.By+"+totp"); err != nil {
			return err
		}
		return h.renderRecoveryCodes(c, codes, kit.SafeNext(pending.Next))
	}
	kind, err := h.cfg.Factors.Verify(ctx, u, code, c.RealIP())
	if e, isApp := apperr.As(err); isApp && (e.Kind == apperr.Invalid || e.Kind == apperr.LimitReached) {
		v, err := h.factorStep(c, u)
		if err != nil {
			return err
		}
		v.Errors = e.Fields
		if !v.TOTP && e.Fields["code"] != "" {
			v.Errors = views.FieldErrors{"code": say("console.rest.factor.error.recovery_or_passkey", nil)}
		}
		if e.Kind == apperr.LimitReached {
			v.Error = e.Message
			if e.RetryAfterSeconds > 0 {
				c.Response().Header().Set("Retry-After", itoa(e.RetryAfterSeconds))
			}
		}
		return h.renderFactor(c, kit.StatusOf[e.Kind], v)
	}
	if err != nil {
		return err
	}
	return h.finishSignIn(c, u, pending.By+"+"+kind, pending.Next)
}

// handleFactorEnrol answers POST /sign-in/factor/enrol: a person whose
// role requires a factor they do not have gets a new authenticator key.
func (h *Handler) handleFactorEnrol(c echo.Context) error {
	u, _, ok, err := h.pendingUser(c)
	if err != nil {
		return err
	}
	if !ok {
		return h.noPendingSignIn(c)
	}
	e, err := h.cfg.Factors.StartTOTP(c.Request().Context(), u)
	if apperr.Is(err, apperr.Conflict) {
		return kit.SeeOther(c, kit.FactorPath) // set up meanwhile: use it
	}
	if err != nil {
		return err
	}
	return h.renderEnrol(c, http.StatusOK, views.FactorEnrolView{QR: e.QR, URI: e.URI, Secret: e.Secret,
		Action: kit.FactorPath, Restart: kit.FactorPath + "/enrol"})
}

// finishSignIn signs u in, identified by by, and sends them on.
func (h *Handler) finishSignIn(c echo.Context, u accounts.User, by, next string) error {
	if err := h.signIn(c, u, by); err != nil {
		return err
	}
	return kit.SeeOther(c, kit.SafeNext(next))
}

// signIn gives u a new session that names them, identified by by: the
// session of the password step ends, so its id is worth nothing after.
func (h *Handler) signIn(c echo.Context, u accounts.User, by string) error {
	sess := kit.Session(c)
	if err := h.Sessions.Regenerate(c.Request().Context(), sess); err != nil {
		return err
	}
	kit.ClearPendingFactor(sess)
	sess.Values[kit.KeyUserID] = u.ID
	sess.Values[kit.KeyIdentifiedBy] = by
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	c.Set(kit.CtxUser, u)
	h.Log.Info("signed in", "user_id", u.ID, "role", u.Role, "identified_by", by)
	return nil
}

func (h *Handler) renderFactor(c echo.Context, status int, v views.SignInFactorView) error {
	p := h.Page(c, title("second_factor", nil))
	p.Narrow = true
	return kit.Render(c, status, views.SignInFactor(p, v))
}

func (h *Handler) renderEnrol(c echo.Context, status int, v views.FactorEnrolView) error {
	p := h.Page(c, title("enrol_app", nil))
	p.Narrow = true
	return kit.Render(c, status, views.FactorEnrol(p, v))
}

func (h *Handler) renderRecoveryCodes(c echo.Context, codes []string, next string) error {
	p := h.Page(c, title("recovery_codes", nil))
	return kit.Render(c, http.StatusOK, views.RecoveryCodes(p, views.RecoveryCodesView{Codes: codes, Next: next}))
}
