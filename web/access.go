package web

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
)

// Access says who may use a route: anyone (public), or signed-in users with
// one of roles.
type Access struct {
	Public bool
	Roles  []accounts.Role
	// Bearer routes take an assistant's API key instead of a session.
	Bearer bool
}

var (
	// Anyone may use the route, signed in or not.
	Anyone = Access{Public: true}
	// SignedIn allows every role.
	SignedIn = Access{Roles: accounts.Roles}
	// APIKey requires a live API key (Authorization: Bearer …); cookie
	// sessions do not count.
	APIKey = Access{Bearer: true}
)

// Only allows the listed roles.
func Only(roles ...accounts.Role) Access { return Access{Roles: roles} }

// Authorize enforces a route's access rule: a visitor who is not signed in
// is sent to sign in (or gets 401 from the API); a signed-in user without an
// allowed role gets 403.
func (s *Server) Authorize(a Access) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if a.Public {
				return next(c)
			}
			if a.Bearer {
				return s.authorizeBearer(c, next)
			}
			u, ok := CurrentUser(c)
			if !ok {
				r := c.Request()
				if r.Method == http.MethodGet && !IsAPI(c) {
					return c.Redirect(http.StatusSeeOther, "/sign-in?next="+url.QueryEscape(r.URL.RequestURI()))
				}
				return apperr.New(apperr.Unauthenticated, "Sign in to continue.")
			}
			if !slices.Contains(a.Roles, u.Role) {
				return apperr.New(apperr.Forbidden, "Your role (%s) cannot open this page.", u.Role.Label())
			}
			return next(c)
		}
	}
}
