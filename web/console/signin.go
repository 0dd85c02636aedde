package console

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// handleSignInForm answers GET /sign-in.
func (h *Handler) handleSignInForm(c echo.Context) error {
	if _, ok := kit.CurrentUser(c); ok {
		return kit.SeeOther(c, kit.SafeNext(c.QueryParam("next")))
	}
	form := views.SignInForm{Next: kit.SafeNext(c.QueryParam("next"))}
	var flash views.Flash
	if c.QueryParam("signed_out") == "1" {
		flash = views.Flash{Text: locale.Console("console.flash.signed_out", nil)}
	}
	return h.renderSignIn(c, http.StatusOK, form, flash)
}

// handleSignIn answers POST /sign-in. Unknown e-mail, wrong password and a
// disabled account get the same answer; too many failures get 429.
func (h *Handler) handleSignIn(c echo.Context) error {
	form := views.SignInForm{Email: strings.TrimSpace(c.FormValue("email")), Next: kit.SafeNext(c.FormValue("next"))}
	user, err := h.Accounts.CheckSignInPassword(c.Request().Context(), form.Email, c.FormValue("password"), c.RealIP())
	if err != nil {
		e, ok := apperr.As(err)
		if !ok || (e.Kind != apperr.Unauthenticated && e.Kind != apperr.LimitReached) {
			return err
		}
		form.Error = e.Message
		status := kit.StatusOf[e.Kind]
		if e.RetryAfterSeconds > 0 {
			c.Response().Header().Set("Retry-After", itoa(e.RetryAfterSeconds))
		}
		return h.renderSignIn(c, status, form, views.Flash{})
	}
	// Staff have no password route: a right password answers as a wrong one
	// does (the page tells staff to use single sign-on), so the form cannot
	// be used to test a staff password.
	if h.cfg.StaffPasswordsOff && user.Role != accounts.Customer {
		form.Error = accounts.ErrBadCredentials.Message
		return h.renderSignIn(c, kit.StatusOf[accounts.ErrBadCredentials.Kind], form, views.Flash{})
	}
	if held, err := h.holdForFactor(c, user, form.Next); held {
		return err
	}
	if err := h.Accounts.CompleteSignIn(c.Request().Context(), user, c.RealIP()); err != nil {
		return err
	}
	if err := h.signIn(c, user, "password"); err != nil {
		return err
	}
	h.Sessions.DropAnonymousCSRF(c.Request(), c.Response())
	return kit.SeeOther(c, form.Next)
}

// handleSignOut answers POST /sign-out: the session ends server-side, so a
// copy of the cookie is useless afterwards. It ends a console user's
// session and a customer's link session (a code or an assertion) alike; a
// visitor with neither gets 401.
func (h *Handler) handleSignOut(c echo.Context) error {
	_, signedIn := kit.CurrentUser(c)
	_, customer := kit.CustomerOf(c)
	_, waiting := h.PendingFactorOf(c)
	if !signedIn && !customer && !waiting {
		return refusal(apperr.Unauthenticated, "sign_in", nil)
	}
	sess := kit.Session(c)
	sess.Options.MaxAge = -1
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	c.Set(kit.CtxUser, nil)
	if !signedIn && !waiting {
		return kit.SeeOther(c, "/requests?signed_out=1")
	}
	return kit.SeeOther(c, "/sign-in?signed_out=1")
}

func (h *Handler) renderSignIn(c echo.Context, status int, form views.SignInForm, flash views.Flash) error {
	csrf, err := h.CSRFToken(c)
	if err != nil {
		return err
	}
	if h.cfg.SSO != nil {
		form.SSOName = h.cfg.SSO.Name()
		form.StaffUseSSO = h.cfg.StaffPasswordsOff
	}
	p := h.Page(c, title("sign_in", nil))
	p.CSRF, p.Narrow, p.Flash = csrf, true, flash
	// A customer on the way to their requests signs in on the business's
	// page, not the console's.
	if h.cfg.CustomerFrame != nil && (form.Next == "/requests" || strings.HasPrefix(form.Next, "/requests/") || strings.HasPrefix(form.Next, "/c/")) {
		p.Customer = h.cfg.CustomerFrame(c)
	}
	return kit.Render(c, status, views.SignIn(p, form))
}
