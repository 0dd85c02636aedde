package adapter

import (
	"errors"
	"fmt"
)

// Outcome says what is known of the effect of a failed call.
type Outcome string

// The outcomes of a failed call.
const (
	// Refused: the system (or the adapter's policy) said no; nothing changed.
	Refused Outcome = "refused"
	// NotSent: the request provably never reached the system (e.g. the
	// connection could not be opened); nothing changed.
	NotSent Outcome = "not_sent"
	// Unknown: the request may have been applied (timeout, reset, lost
	// response, 5xx on a write). Never retried; reconciled instead.
	Unknown Outcome = "unknown"
)

// Error is a structured failure from an adapter: a stable code, whether the
// same call may succeed later, and what to do next, written for the model
// and for a person. A bare HTTP status never reaches a caller.
type Error struct {
	Code      string  `json:"code"`
	Message   string  `json:"message"`
	Retryable bool    `json:"retryable"`
	Hint      string  `json:"hint,omitempty"`
	Outcome   Outcome `json:"outcome"`
	// Field names the argument at fault, for validation errors.
	Fields map[string]string `json:"fields,omitempty"`
	// Candidates lists the matches of an ambiguous reference, in human terms.
	Candidates []Candidate `json:"candidates,omitempty"`
	// PolicyRefusal marks refusals by business policy (refund window,
	// one-per-day): further attempts on the same target are blocked.
	PolicyRefusal bool  `json:"policy_refusal,omitempty"`
	Err           error `json:"-"`
}

// Candidate is one match of an ambiguous reference.
type Candidate struct {
	ID      string `json:"id"`
	Display string `json:"display"`
}

// Error renders the code, message and cause for logs.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Code, e.Message)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Common codes every adapter uses.
const (
	CodeInvalidArguments = "invalid_arguments"
	CodeUnknownAction    = "unknown_action"
	CodeNotFound         = "not_found"
	CodeAmbiguous        = "ambiguous_reference"
	CodeStaleTarget      = "target_changed"
	CodeUnreachable      = "system_unreachable"
	CodeOutcomeUnknown   = "outcome_unknown"
	CodeInProgress       = "call_in_progress"
)

// Invalid is a refusal of bad arguments, naming each field and its fix.
func Invalid(fields map[string]string) *Error {
	return &Error{Code: CodeInvalidArguments, Message: "The arguments are not valid.", Outcome: Refused,
		Hint: "Fix the named fields and propose again.", Fields: fields}
}

// NotFound is a refusal for an object the principal does not have.
func NotFound(kind, ref string) *Error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf("No %s %q for this customer.", kind, ref), Outcome: Refused,
		Hint: fmt.Sprintf("Use a read tool to list the customer's %ss and pass one of their ids.", kind)}
}

// Ambiguous is a refusal for a reference matching several objects.
func Ambiguous(kind, ref string, candidates []Candidate) *Error {
	return &Error{Code: CodeAmbiguous, Message: fmt.Sprintf("%q matches %d %ss.", ref, len(candidates), kind),
		Outcome: Refused, Candidates: candidates,
		Hint: "Ask the customer which one they mean, then pass its id. Do not pick one yourself."}
}

// Unknowable wraps a failure after which the effect may or may not exist.
func Unknowable(err error) *Error {
	return &Error{Code: CodeOutcomeUnknown, Message: "The system did not confirm the request; it may or may not have been applied.",
		Outcome: Unknown, Hint: "Do not retry. A person will check the original request.", Err: err}
}

// AsError returns the *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
