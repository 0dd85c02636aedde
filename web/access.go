package web

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
)

// access says who may use a route: anyone (public), or signed-in users with
// one of roles.
type access struct {
	public bool
	roles  []accounts.Role
	// bearer routes take an assistant's API key instead of a session.
	bearer bool
}

var (
	// anyone may use the route, signed in or not.
	anyone = access{public: true}
	// signedIn allows every role.
	signedIn = access{roles: accounts.Roles}
	// assistant requires a live API key (Authorization: Bearer …); cookie
	// sessions do not count.
	assistant = access{bearer: true}
)

// only allows the listed roles.
func only(roles ...accounts.Role) access { return access{roles: roles} }

// authorize enforces a route's access rule: a visitor who is not signed in
// is sent to sign in (or gets 401 from the API); a signed-in user without an
// allowed role gets 403.
func (s *Server) authorize(a access) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if a.public {
				return next(c)
			}
			if a.bearer {
				return s.authorizeBearer(c, next)
			}
			u, ok := currentUser(c)
			if !ok {
				r := c.Request()
				if r.Method == http.MethodGet && !isAPI(c) {
					return c.Redirect(http.StatusSeeOther, "/sign-in?next="+url.QueryEscape(r.URL.RequestURI()))
				}
				return apperr.New(apperr.Unauthenticated, "Sign in to continue.")
			}
			if !slices.Contains(a.roles, u.Role) {
				return apperr.New(apperr.Forbidden, "Your role (%s) cannot open this page.", u.Role.Label())
			}
			return next(c)
		}
	}
}
