package kit

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
)

// Keys of values kept on the echo.Context for one request.
const (
	ctxSession = "session"
	CtxUser    = "user"
	ctxNonce   = "nonce"
	// ctxAnonymousCSRF is the token a visitor's new CSRF cookie was given
	// on this request, so that every form of the page carries the same one.
	ctxAnonymousCSRF = "anonymous_csrf"
)

// WithRequestContext gives the request its CSP nonce and the client IP that
// the IPExtractor chose, in the request context where templ and the session
// store read them.
func (s *Site) WithRequestContext(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		nonce := randomToken(16)
		c.Set(ctxNonce, nonce)
		ctx := templ.WithNonce(c.Request().Context(), nonce)
		ctx = context.WithValue(ctx, ipKey{}, c.RealIP())
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// LogRequests writes one line per request. It logs the route pattern rather
// than the raw path, so tokens in paths never reach the logs.
func (s *Site) LogRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err) // renders now, so the status below is the one sent
		}
		status := c.Response().Status
		attrs := []any{"method", c.Request().Method, "route", c.Path(), "status", status,
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000, "ip", c.RealIP(), "bytes", c.Response().Size}
		if u, ok := c.Get(CtxUser).(accounts.User); ok {
			attrs = append(attrs, "user_id", u.ID)
		}
		switch {
		case status >= 500:
			s.Log.Error("request", append(attrs, "error", err)...)
		default:
			s.Log.Info("request", attrs...)
		}
		return nil
	}
}

// SecurityHeaders sets the headers every response carries, error pages and
// static files included.
func (s *Site) SecurityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		nonce, _ := c.Get(ctxNonce).(string)
		h.Set("Content-Security-Policy", fmt.Sprintf("default-src 'self'; script-src 'self' 'nonce-%s'; "+
			"style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; "+
			"object-src 'none'; base-uri 'none'; frame-ancestors 'none'", nonce))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
		if s.TLS {
			h.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains")
		}
		return next(c)
	}
}

// RecoverPanics turns a panic in a handler into an internal error page.
func (s *Site) RecoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(error); ok && errors.Is(e, http.ErrAbortHandler) {
					panic(r)
				}
				err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		return next(c)
	}
}

// LoadSession loads the session and, when it names a live user, the user.
// A disabled user's session is ignored (disabling also revokes it).
func (s *Site) LoadSession(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// The API and the MCP server authenticate by bearer key only, a
		// signed route (Access.Signed) by its request's signature.
		if strings.HasPrefix(c.Path(), "/static/") || c.Path() == "/healthz" || c.Path() == "/readyz" || IsAPI(c) || s.signed(c) {
			return next(c)
		}
		sess, err := s.Sessions.Get(c.Request(), sessionCookie)
		if err != nil {
			return err
		}
		c.Set(ctxSession, sess)
		if id, ok := sess.Values[KeyUserID].(int64); ok && !sess.IsNew {
			u, err := s.sessionUser(c, sess, id)
			switch {
			case apperr.Is(err, apperr.NotFound):
			case err != nil:
				return err
			case !u.Disabled() && !s.signInExpired(sess):
				c.Set(CtxUser, u)
			}
		}
		// Each request from a signed-in user counts as activity; the row is
		// written at most once a minute. A session revoked meanwhile (sign-out
		// in another tab) stays revoked.
		if _, signedIn := c.Get(CtxUser).(accounts.User); signedIn {
			if err := sess.Save(c.Request(), c.Response()); err != nil && !errors.Is(err, accounts.ErrNoSession) {
				return err
			}
		}
		err = next(c)
		return err
	}
}

// signInExpired reports whether the session's sign-in through the OpenID
// provider has passed the ID token's expiry.
func (s *Site) signInExpired(sess *sessions.Session) bool {
	until, ok := sess.Values[KeySignedInUntil].(int64)
	return ok && !s.Now().Before(time.Unix(until, 0))
}

// sessionUser is the session's user: the row read with the session in the
// same query when there is one, else read now.
func (s *Site) sessionUser(c echo.Context, sess *sessions.Session, id int64) (accounts.User, error) {
	if u, ok := sess.Values[sessionUserKey].(accounts.User); ok && u.ID == id {
		return u, nil
	}
	return s.Accounts.User(c.Request().Context(), id)
}

// CheckCSRF refuses state-changing requests from other origins (Go's
// CrossOriginProtection) and those without this session's token (or, with
// no session, the token of the CSRF cookie).
func (s *Site) CheckCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	cop := http.NewCrossOriginProtection()
	return func(c echo.Context) error {
		r := c.Request()
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return next(c)
		}
		// Bearer-authenticated and signed paths take no cookies that a
		// forged request could ride on, so there is no session token to check.
		if IsAPI(c) || s.signed(c) {
			return next(c)
		}
		if err := cop.Check(r); err != nil {
			return apperr.Wrap(err, apperr.Forbidden, "This request came from another site and was refused.")
		}
		got := r.Header.Get("X-CSRF-Token")
		if got == "" {
			got = c.FormValue("_csrf")
		}
		var ok bool
		if sess := Session(c); sess != nil && !sess.IsNew {
			want, _ := sess.Values[KeyCSRF].(string)
			ok = want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
		} else {
			ok = s.Sessions.checkAnonymousCSRF(r, got)
		}
		if !ok {
			return &apperr.Error{Kind: apperr.Forbidden, Code: "csrf",
				Message: "This form has expired or did not come from this site. Go back, reload the page and try again."}
		}
		return next(c)
	}
}

// Session returns the request's Session (nil on static routes).
func Session(c echo.Context) *sessions.Session {
	sess, _ := c.Get(ctxSession).(*sessions.Session)
	return sess
}

// CurrentUser returns the signed-in user, if any.
func CurrentUser(c echo.Context) (accounts.User, bool) {
	u, ok := c.Get(CtxUser).(accounts.User)
	return u, ok
}

// CSRFToken returns the token for this request's forms: the session's, or
// for a visitor without a session the one in the CSRF cookie (see
// csrf_cookie.go), so an anonymous form stores nothing on the server.
func (s *Site) CSRFToken(c echo.Context) (string, error) {
	if sess := Session(c); sess != nil && !sess.IsNew {
		tok, _ := sess.Values[KeyCSRF].(string)
		return tok, nil
	}
	// A page asks more than once (its forms, its language switch); a
	// visitor's first page must give all of them the token of the one
	// cookie it sets.
	if tok, ok := c.Get(ctxAnonymousCSRF).(string); ok {
		return tok, nil
	}
	tok, err := s.Sessions.anonymousCSRF(c.Request(), c.Response())
	if err == nil {
		c.Set(ctxAnonymousCSRF, tok)
	}
	return tok, err
}
