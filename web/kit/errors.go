package kit

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
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

// Describe maps an error to a status and what may be shown about it.
func Describe(err error) (int, APIError) {
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

// IsAPI reports whether the request is the assistant's (the JSON API or
// the MCP server), which answers errors in JSON and uses no session.
func IsAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	return strings.HasPrefix(p, "/api/") || p == "/mcp"
}
