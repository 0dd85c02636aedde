package demoshop

import (
	"fmt"
	"net/http"
)

// Error types, as a payment provider names them in error.type.
const (
	errTypeInvalidRequest = "invalid_request_error"
	errTypeCard           = "card_error"
	errTypeAPI            = "api_error"
	errTypeAuthentication = "authentication_error"
)

// apiError is a provider-style error: the shop answers it as
// {"error":{"type","code","message",...}} with its status.
type apiError struct {
	status      int
	typ         string
	code        string
	message     string
	param       string
	declineCode string
	// details are extra members of the error object, such as current_version.
	details map[string]any
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message)
}

// body is the JSON document the client receives.
func (e *apiError) body() map[string]any {
	obj := map[string]any{"type": e.typ, "code": e.code, "message": e.message}
	if e.param != "" {
		obj["param"] = e.param
	}
	if e.declineCode != "" {
		obj["decline_code"] = e.declineCode
	}
	for k, v := range e.details {
		obj[k] = v
	}
	return map[string]any{"error": obj}
}

func errNotFound(object, id string) *apiError {
	return &apiError{
		status:  http.StatusNotFound,
		typ:     errTypeInvalidRequest,
		code:    "resource_missing",
		message: fmt.Sprintf("No such %s: '%s'", object, id),
		param:   "id",
	}
}

func errParam(param, code, format string, args ...any) *apiError {
	return &apiError{
		status:  http.StatusBadRequest,
		typ:     errTypeInvalidRequest,
		code:    code,
		message: fmt.Sprintf(format, args...),
		param:   param,
	}
}

func errMissing(param string) *apiError {
	return errParam(param, "parameter_missing", "Missing required param: %s.", param)
}

func errConflict(code string, details map[string]any, format string, args ...any) *apiError {
	return &apiError{
		status:  http.StatusConflict,
		typ:     errTypeInvalidRequest,
		code:    code,
		message: fmt.Sprintf(format, args...),
		details: details,
	}
}

// checkVersion fails with 409 version_conflict when the client said which
// version it read and the object has moved on since.
func checkVersion(object string, expected *int, current int) error {
	if expected == nil || *expected == current {
		return nil
	}
	return errConflict("version_conflict",
		map[string]any{"current_version": current, "expected_version": *expected},
		"The %s was modified since you read it (expected version %d, current version %d).",
		object, *expected, current)
}

var errInjected = &apiError{
	status:  http.StatusInternalServerError,
	typ:     errTypeAPI,
	code:    "internal_error",
	message: "An unexpected error occurred while processing your request.",
}

// errUnauthenticated answers a call without the shop's token.
var errUnauthenticated = &apiError{
	status:  http.StatusUnauthorized,
	typ:     errTypeAuthentication,
	code:    "invalid_api_key",
	message: "Send the shop's token as Authorization: Bearer <token>.",
}

var errUnknownRoute = &apiError{
	status:  http.StatusNotFound,
	typ:     errTypeInvalidRequest,
	code:    "unrecognized_request_url",
	message: "Unrecognized request URL. Please see the demo shop README for the supported routes.",
}
