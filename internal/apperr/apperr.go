// Package apperr is the console's small vocabulary of failures. Domain code
// returns these kinds, wrapped with context; the web layer maps each kind to
// an HTTP status in one table and shows users only the message, never the
// wrapped internals.
//
// Not-found is decided at the source: the store's not-found
// (store.NotFoundError) names what was missing, and As reads it as NotFound
// with the message "No such <what>.", so a caller returns the store's error
// as it is. A caller makes an Error of its own only where its reader needs
// other words or another kind; an Error in the chain always wins.
package apperr

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kind says what sort of failure an error is.
type Kind string

// The kinds of failure. Each maps to one HTTP status in web.
const (
	// NotFound: the thing does not exist, or the caller may not know it does.
	NotFound Kind = "not_found"
	// Invalid: the input is wrong; Fields says which field and how to fix it.
	Invalid Kind = "invalid"
	// Conflict: the object changed since the caller read it (stale version)
	// or the request collides with another one in progress.
	Conflict Kind = "conflict"
	// IllegalTransition: the object's state does not allow this change.
	IllegalTransition Kind = "illegal_transition"
	// Unauthenticated: the caller has not proved who they are.
	Unauthenticated Kind = "unauthenticated"
	// Forbidden: the caller is known but may not do this.
	Forbidden Kind = "forbidden"
	// LimitReached: a budget, rate or throttle says no for now.
	LimitReached Kind = "limit_reached"
	// Upstream: a connected business system refused or failed; Code,
	// Retryable and Hint come from the adapter.
	Upstream Kind = "upstream"
	// BadRequest: the request itself could not be understood (malformed
	// JSON, a field the call does not take); answered with 400.
	BadRequest Kind = "bad_request"
	// TooLarge: the request body is larger than the route takes; answered
	// with 413 before anything reads it further.
	TooLarge Kind = "too_large"
	// Internal: a bug or an outage of our own; the message is generic.
	Internal Kind = "internal"
)

// Error is a failure with a kind, a message fit for the person or program
// that made the request, and optionally the cause for the logs.
type Error struct {
	Kind    Kind
	Code    string // machine-readable detail, e.g. "payment_method_declined"; defaults to Kind
	Message string // safe to show
	Hint    string // what to do next, safe to show
	// Retryable says whether the same request may succeed later unchanged.
	Retryable bool
	// Fields maps an input field to what is wrong with it and how to fix it.
	Fields map[string]string
	// FieldCodes says each of Fields' errors as a code and the facts its
	// message names (the tries left), for a page that words it in its
	// reader's language; the API answers Fields, as before.
	FieldCodes map[string]FieldCode
	// RetryAfterSeconds is set for LimitReached when the wait is known.
	RetryAfterSeconds int
	// Details carries extra facts for API callers, e.g. the candidates of an
	// ambiguous reference.
	Details map[string]any
	Err     error // cause, for logs only
}

// Error renders the kind, message and cause for logs.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Kind))
	if e.Code != "" && e.Code != string(e.Kind) {
		b.WriteString(" (" + e.Code + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if len(e.Fields) > 0 {
		for _, k := range slices.Sorted(maps.Keys(e.Fields)) {
			fmt.Fprintf(&b, "; %s: %s", k, e.Fields[k])
		}
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// CodeOrKind is the machine-readable code shown to API callers.
func (e *Error) CodeOrKind() string {
	if e.Code != "" {
		return e.Code
	}
	return string(e.Kind)
}

// New makes an error of kind with a message safe to show.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap makes an error of kind with a message safe to show and a cause that
// only the logs see.
func Wrap(err error, kind Kind, message string) *Error {
	return &Error{Kind: kind, Message: message, Err: err}
}

// FieldCode is one field's error said as a code ("code_wrong") with the
// facts its message names ({"tries_left": 2}).
type FieldCode struct {
	Code string
	Data map[string]any
}

// InvalidField reports one bad field: its message for the API and the
// logs, and its code and facts for a page that words it itself.
func InvalidField(field, code, message string, data map[string]any) *Error {
	e := InvalidFields(map[string]string{field: message})
	e.FieldCodes = map[string]FieldCode{field: {Code: code, Data: data}}
	return e
}

// InvalidFields reports bad input, one message per field.
func InvalidFields(fields map[string]string) *Error {
	return &Error{Kind: Invalid, Message: "Some fields need fixing.", Fields: fields}
}

// missing is a not-found from below this vocabulary: the store's
// NotFoundError, whose Missing names the missing thing ("task"). apperr
// knows the method, not the type, so that the store (the bottom layer)
// and apperr need not import each other.
type missing interface {
	error
	Missing() string
}

// As returns the *Error in err's chain, if any. A chain without one that
// holds a not-found of the store's is a NotFound with the message "No such
// <what>." and err as its cause.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	var m missing
	if errors.As(err, &m) {
		msg := "Not found."
		if what := m.Missing(); what != "" {
			msg = "No such " + what + "."
		}
		return &Error{Kind: NotFound, Message: msg, Err: err}, true
	}
	return nil, false
}

// KindOf returns the kind of err, Internal for errors outside this vocabulary.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind
	}
	return Internal
}

// Is reports whether err is of kind.
func Is(err error, kind Kind) bool { return err != nil && KindOf(err) == kind }
