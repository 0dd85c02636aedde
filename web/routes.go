package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/accounts"
)

// route is one line of the route table: every route says who may use it.
type route struct {
	method  string
	path    string
	handler echo.HandlerFunc
	allow   access
}

// routes is the console's whole URL space. A route added anywhere else has
// no access rule, and the role-matrix test fails on it.
func (s *Server) routes() []route {
	admin := only(accounts.Admin)
	staff := only(accounts.Agent, accounts.Manager, accounts.Admin)
	return []route{
		{http.MethodGet, "/healthz", s.handleHealthz, anyone},
		{http.MethodGet, "/readyz", s.handleReadyz, anyone},
		{http.MethodGet, "/static/*", s.handleStatic, anyone},

		{http.MethodGet, "/sign-in", s.handleSignInForm, anyone},
		{http.MethodPost, "/sign-in", s.handleSignIn, anyone},
		{http.MethodPost, "/sign-out", s.handleSignOut, signedIn},
		{http.MethodGet, "/", s.handleHome, signedIn},
		{http.MethodGet, "/account/password", s.handlePasswordForm, signedIn},
		{http.MethodPost, "/account/password", s.handlePasswordChange, signedIn},

		{http.MethodGet, "/systems", s.handleSystems, staff},

		{http.MethodGet, "/admin/users", s.handleAdminUsers, admin},
		{http.MethodPost, "/admin/users", s.handleAdminUserCreate, admin},
		{http.MethodPost, "/admin/users/:id/role", s.handleAdminUserRole, admin},
		{http.MethodPost, "/admin/users/:id/disable", s.handleAdminUserDisable, admin},
		{http.MethodPost, "/admin/users/:id/enable", s.handleAdminUserEnable, admin},
	}
}
