package kit

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/locale"
)

// Access says who may use a route: anyone (public), signed-in users with
// one of Roles, or an assistant with an API key (Bearer).
type Access struct {
	Public bool
	Roles  []accounts.Role
	// Bearer routes take an assistant's API key instead of a session; the
	// API checks the key (see Route.Bearer).
	Bearer bool
	// Audience names, for a public route, the signed-in role it is made
	// for, so the header lists it for them alone; it grants nothing.
	Audience []accounts.Role
	// Signed routes are public and authenticate each request themselves,
	// by a signature over its raw body (Slack's interactions, RawBody): no
	// session is loaded and no CSRF token asked, as no cookie carries any
	// authority there.
	Signed bool
}

var (
	// Anyone may use the route, signed in or not.
	Anyone = Access{Public: true}
	// SignedIn allows every role.
	SignedIn = Access{Roles: accounts.Roles}
	// APIKey requires a live API key (Authorization: Bearer …); cookie
	// sessions do not count.
	APIKey = Access{Bearer: true}
	// SignedBody is a route whose handler verifies the request's signature
	// (see Access.Signed).
	SignedBody = Access{Public: true, Signed: true}
	// OAuthClient is an endpoint of the authorization server that programs
	// call (token, registration, revocation): public, no session loaded and
	// no CSRF token asked, as Signed; the handler checks what the client
	// presents (a code with its PKCE verifier, a refresh token).
	OAuthClient = Access{Public: true, Signed: true}
)

// Only allows the listed roles.
func Only(roles ...accounts.Role) Access { return Access{Roles: roles} }

// For is a public route made for one role (a customer's pages, open to a
// customer who proved who they are on a link without an account).
func For(role accounts.Role) Access { return Access{Public: true, Audience: []accounts.Role{role}} }

// Allows reports whether a signed-in user with role may use the route, or,
// for a public route, whether the route is made for role. The header's
// navigation lists exactly these.
func (a Access) Allows(role accounts.Role) bool {
	if a.Public {
		return slices.Contains(a.Audience, role)
	}
	return slices.Contains(a.Roles, role)
}

// Route is one line of the route table: every route says who may use it.
// Each audience's package lists its own; the server concatenates them.
type Route struct {
	Method  string
	Path    string
	Handler echo.HandlerFunc
	Allow   Access
}

// GET and POST make the route table's lines.
func GET(path string, h echo.HandlerFunc, a Access) Route {
	return Route{Method: http.MethodGet, Path: path, Handler: h, Allow: a}
}

// POST is GET's twin for forms and API calls.
func POST(path string, h echo.HandlerFunc, a Access) Route {
	return Route{Method: http.MethodPost, Path: path, Handler: h, Allow: a}
}

// Authorize enforces a route's session rule: a visitor who is not signed in
// is sent to sign in (or gets 401 from the API); a signed-in user without an
// allowed role gets 403. A bearer route is refused here: the server puts
// the API's key check in front of those instead.
func (s *Site) Authorize(a Access) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if a.Public {
				return next(c)
			}
			if a.Bearer {
				return &apperr.Error{Kind: apperr.Unauthenticated, Code: "missing_api_key", Message: "This call needs an API key."}
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
				return refuseRole(c, u.Role)
			}
			return next(c)
		}
	}
}

// refuseRole refuses a route to a signed-in person whose role it is not
// for. A page says it in the console's words (console.rest.access.refused,
// the role as console.labels.role.*, which an installation may override);
// the API keeps its own English.
func refuseRole(c echo.Context, r accounts.Role) error {
	if IsAPI(c) || !r.Valid() {
		return apperr.New(apperr.Forbidden, "Your role (%s) cannot open this page.", r.Label())
	}
	role := locale.Console("console.labels.role."+string(r), nil)
	return apperr.New(apperr.Forbidden, "%s", locale.Console("console.rest.access.refused", locale.Params{"Role": role}))
}
