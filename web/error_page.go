package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/views"
	"countersign/web/kit"
)

var titleOf = map[int]string{
	http.StatusBadRequest:            "That request was not understood",
	http.StatusUnauthorized:          "Please sign in",
	http.StatusForbidden:             "You cannot do that",
	http.StatusNotFound:              "Page not found",
	http.StatusMethodNotAllowed:      "That is not allowed here",
	http.StatusConflict:              "Something changed meanwhile",
	http.StatusUnprocessableEntity:   "Some fields need fixing",
	http.StatusTooManyRequests:       "Slow down",
	http.StatusBadGateway:            "A connected system did not answer as expected",
	http.StatusInternalServerError:   "Something went wrong on our side",
	http.StatusServiceUnavailable:    "Not available right now",
	http.StatusRequestEntityTooLarge: "That request is too large",
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
	p := s.frame.Page(c, titleOf[status])
	p.Narrow = true
	view := views.ErrorView{Status: status, Title: titleOf[status], Message: body.Message, Hint: body.Hint, Back: "/"}
	if rerr := kit.Render(c, status, views.ErrorPage(p, view)); rerr != nil {
		s.log.Error("render error page", "error", rerr)
		_ = c.String(status, body.Message)
	}
}
