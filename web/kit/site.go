// Package kit is the HTTP plumbing every audience of the console shares:
// the request middleware (security headers, bounded and checked input,
// sessions, CSRF), who may use a route, the one mapping from an error to a
// status and what may be shown of it, the session store, the customer's
// proof kept in a session, flash messages and rendering. It knows no page:
// the console's views stay out of it, so the assistant's API, which
// imports it, never links them.
package kit

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
)

// Site is what the handlers of every audience share.
type Site struct {
	Log      *slog.Logger
	Now      func() time.Time
	Accounts *accounts.Service
	Sessions *SessionStore
	// TLS says the console is served over HTTPS (directly or behind a proxy
	// that terminates TLS), which turns on HSTS.
	TLS bool
	// CheckedHeaders are the request headers whose values reach the
	// database; RejectBadText bounds them and refuses hostile text in them.
	CheckedHeaders []string
	// Signed holds the "METHOD path" of every route with Access.Signed,
	// which take no session and no CSRF token; the server fills it while it
	// registers the routes.
	Signed map[string]bool
}

// signed reports whether the request's route authenticates by a signature
// over its body (Access.Signed).
func (s *Site) signed(c echo.Context) bool { return s.Signed[c.Request().Method+" "+c.Path()] }
