package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// titleOf is an error page's title for its status, in the request's
// language (a customer's page carries the customer's; English elsewhere):
// the catalogue's pages.error.title.<status>.
func titleOf(c echo.Context, status int) string {
	id := "pages.error.title." + strconv.Itoa(status)
	if t := locale.T(c.Request().Context(), id, nil); t != id {
		return t
	}
	return ""
}

// customerWords are the catalogue's words, on a customer's page, for the
// errors no customer handler said in the customer's language: those of
// the middleware in front of every route, and the internal ones, which
// kit.Describe words in English.
var customerWords = map[string]string{
	"csrf":                  "pages.error.csrf",
	string(apperr.Internal): "pages.error.internal",
}

// handleError is Echo's HTTPErrorHandler: it turns any error into a status
// and an error page, or a JSON error under /api/. Internals are logged, never
// shown.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	// logRequests logs the error with the request's line.
	status, body := kit.Describe(err)
	if body.Code == "sign_in_throttled" || status == http.StatusTooManyRequests {
		if e, ok := apperr.As(err); ok && e.RetryAfterSeconds > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
		}
	}
	if kit.IsAPI(c) {
		_ = c.JSON(status, body)
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	if s.customerRoutes[c.Request().Method+" "+c.Path()] && !locale.Decided(c.Request().Context()) {
		s.customer.DecideLocale(c)
	}
	title := titleOf(c, status)
	p := s.frame.Page(c, title)
	p.Narrow = true
	view := views.ErrorView{Status: status, Title: title, Message: body.Message, Hint: body.Hint, Back: "/"}
	if id, ok := customerWords[body.Code]; ok && locale.Decided(c.Request().Context()) {
		view.Message, view.Hint = locale.T(c.Request().Context(), id, nil), ""
	}
	if rerr := kit.Render(c, status, views.ErrorPage(p, view)); rerr != nil {
		s.log.Error("render error page", "error", rerr)
		_ = c.String(status, body.Message)
	}
}
