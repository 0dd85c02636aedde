package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/views"
)

// handleSignInForm answers GET /sign-in.
func (s *Server) handleSignInForm(c echo.Context) error {
	if _, ok := CurrentUser(c); ok {
		return SeeOther(c, SafeNext(c.QueryParam("next")))
	}
	form := views.SignInForm{Next: SafeNext(c.QueryParam("next"))}
	var flash views.Flash
	if c.QueryParam("signed_out") == "1" {
		flash = views.Flash{Text: "You have signed out."}
	}
	return s.renderSignIn(c, http.StatusOK, form, flash)
}

// handleSignIn answers POST /sign-in. Unknown e-mail, wrong password and a
// disabled account get the same answer; too many failures get 429.
func (s *Server) handleSignIn(c echo.Context) error {
	form := views.SignInForm{Email: strings.TrimSpace(c.FormValue("email")), Next: SafeNext(c.FormValue("next"))}
	user, err := s.cfg.Accounts.SignIn(c.Request().Context(), form.Email, c.FormValue("password"), c.RealIP())
	if err != nil {
		e, ok := apperr.As(err)
		if !ok || (e.Kind != apperr.Unauthenticated && e.Kind != apperr.LimitReached) {
			return err
		}
		form.Error = e.Message
		status := StatusOf[e.Kind]
		if e.RetryAfterSeconds > 0 {
			c.Response().Header().Set("Retry-After", itoa(e.RetryAfterSeconds))
		}
		return s.renderSignIn(c, status, form, views.Flash{})
	}
	sess := Session(c)
	if err := s.cfg.Sessions.Regenerate(c.Request().Context(), sess); err != nil {
		return err
	}
	sess.Values[KeyUserID] = user.ID
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	s.cfg.Sessions.DropAnonymousCSRF(c.Request(), c.Response())
	s.log.Info("signed in", "user_id", user.ID, "role", user.Role)
	return SeeOther(c, form.Next)
}

// handleSignOut answers POST /sign-out: the session ends server-side, so a
// copy of the cookie is useless afterwards. It ends a console user's
// session and a customer's link session (a code or an assertion) alike; a
// visitor with neither gets 401.
func (s *Server) handleSignOut(c echo.Context) error {
	_, signedIn := CurrentUser(c)
	_, customer := CustomerOf(c)
	if !signedIn && !customer {
		return apperr.New(apperr.Unauthenticated, "Sign in to continue.")
	}
	sess := Session(c)
	sess.Options.MaxAge = -1
	if err := sess.Save(c.Request(), c.Response()); err != nil {
		return err
	}
	c.Set(CtxUser, nil)
	if !signedIn {
		return SeeOther(c, "/requests?signed_out=1")
	}
	return SeeOther(c, "/sign-in?signed_out=1")
}

func (s *Server) renderSignIn(c echo.Context, status int, form views.SignInForm, flash views.Flash) error {
	csrf, err := s.CSRFToken(c)
	if err != nil {
		return err
	}
	p := s.Page(c, "Sign in")
	p.CSRF, p.Narrow, p.Flash = csrf, true, flash
	return Render(c, status, views.SignIn(p, form))
}
