package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/views"
)

// StatusOf is the one table from error kind to HTTP status.
var StatusOf = map[apperr.Kind]int{
	apperr.NotFound:          http.StatusNotFound,
	apperr.Invalid:           http.StatusUnprocessableEntity,
	apperr.Conflict:          http.StatusConflict,
	apperr.IllegalTransition: http.StatusConflict,
	apperr.Unauthenticated:   http.StatusUnauthorized,
	apperr.Forbidden:         http.StatusForbidden,
	apperr.LimitReached:      http.StatusTooManyRequests,
	apperr.Upstream:          http.StatusBadGateway,
	apperr.Internal:          http.StatusInternalServerError,
	apperr.BadRequest:        http.StatusBadRequest,
	apperr.TooLarge:          http.StatusRequestEntityTooLarge,
}

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

// APIError is the JSON shape of every API error.
type APIError struct {
	Code      string            `json:"code"`
	Message   string            `json:"message"`
	Retryable bool              `json:"retryable"`
	Hint      string            `json:"hint,omitempty"`
	Fields    map[string]string `json:"fields,omitempty"`
	// Details carries extra facts, e.g. the candidates of an ambiguous reference.
	Details map[string]any `json:"details,omitempty"`
}

// handleError is Echo's HTTPErrorHandler: it turns any error into a status
// and an error page, or a JSON error under /api/. Internals are logged, never
// shown.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	// logRequests logs the error with the request's line.
	status, body := s.Describe(err)
	if body.Code == "sign_in_throttled" || status == http.StatusTooManyRequests {
		if e, ok := apperr.As(err); ok && e.RetryAfterSeconds > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
		}
	}
	if IsAPI(c) {
		_ = c.JSON(status, body)
		return
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	p := s.Page(c, titleOf[status])
	p.Narrow = true
	view := views.ErrorView{Status: status, Title: titleOf[status], Message: body.Message, Hint: body.Hint, Back: "/"}
	if rerr := Render(c, status, views.ErrorPage(p, view)); rerr != nil {
		s.log.Error("render error page", "error", rerr)
		_ = c.String(status, body.Message)
	}
}

// Describe maps an error to a status and what may be shown about it.
func (s *Server) Describe(err error) (int, APIError) {
	if e, ok := apperr.As(err); ok {
		status := StatusOf[e.Kind]
		msg := e.Message
		if e.Kind == apperr.Internal || msg == "" {
			msg = "Something went wrong on our side. It has been logged; please try again."
		}
		return status, APIError{Code: e.CodeOrKind(), Message: msg, Retryable: e.Retryable, Hint: e.Hint, Fields: e.Fields, Details: e.Details}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := http.StatusText(he.Code)
		switch he.Code {
		case http.StatusNotFound:
			msg = "There is nothing at this address. Check the link, or start again from the start page."
		case http.StatusMethodNotAllowed:
			msg = "This address does not take that kind of request."
		}
		code := strings.ToLower(strings.ReplaceAll(http.StatusText(he.Code), " ", "_"))
		return he.Code, APIError{Code: code, Message: msg, Retryable: he.Code >= 500}
	}
	return http.StatusInternalServerError, APIError{Code: string(apperr.Internal),
		Message: "Something went wrong on our side. It has been logged; please try again.", Retryable: true}
}

func IsAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	return strings.HasPrefix(p, "/api/") || p == "/mcp"
}
