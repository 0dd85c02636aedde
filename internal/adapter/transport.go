package adapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
)

// MaxAnswerBytes bounds what an adapter reads of a system's answer.
const MaxAnswerBytes = 4 << 20

// TransportError is a call that got no usable answer. Written is false only
// when the request provably never left: no connection was made, or
// dialling failed. It is kept as an *Error's cause for logs.
type TransportError struct {
	Method, Path string
	Written      bool
	Err          error
}

func (e *TransportError) Error() string {
	state := "not sent"
	if e.Written {
		state = "sent, no answer"
	}
	return fmt.Sprintf("%s %s (%s): %v", e.Method, e.Path, state, e.Err)
}

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// Unreachable is a call that provably changed nothing because who (how a
// message names the system: "The shop", "billing") could not be reached:
// NotSent, and the same call may be tried again.
func Unreachable(who string, te *TransportError) *Error {
	return &Error{Code: CodeUnreachable, Outcome: NotSent, Retryable: true,
		Message: who + " could not be reached; nothing was changed.",
		Hint:    "Try again in a moment; if it keeps failing, hand the conversation to a person.", Err: te}
}

// TransportFailure maps a call without an answer: a write that may have
// left is Unknown; anything else is Unreachable.
func TransportFailure(who string, te *TransportError, write bool) *Error {
	if te.Written && write {
		return Unknowable(te)
	}
	return Unreachable(who, te)
}

// Request is one HTTP request an adapter sends.
type Request struct {
	Method string
	// URL is where it goes; Path names it in errors and logs.
	URL, Path string
	// Body, when not nil, is sent as JSON.
	Body []byte
	// Prepare, optional, adds the system's headers (authorisation, the
	// idempotency key) to the request.
	Prepare func(*http.Request)
	// Write says the request may change something: when it may have left
	// and no answer came, its outcome is Unknown.
	Write bool
	// Answered, optional, is given the answer's header (a Link to the next
	// page of a list).
	Answered func(http.Header)
}

// errPathMoves is the cause of a request Exchange would not send.
var errPathMoves = errors.New(`a path segment is "." or "..", or holds a slash, as it is or percent-decoded`)

// Exchange sends r with c and returns the answer's status and body (at
// most MaxAnswerBytes), whatever the status. A call with no usable answer
// fails as TransportFailure says, who naming the system; a request whose
// bytes may have left counts as sent, since only a failure before any
// connection, or while dialling, proves otherwise. A URL whose path has a
// segment that is, or percent-decodes to, a dot segment or a slash is not
// sent at all (invalid_arguments, NotSent).
func Exchange(ctx context.Context, c *http.Client, who string, r Request) (status int, answer []byte, err error) {
	var rd io.Reader
	if r.Body != nil {
		rd = bytes.NewReader(r.Body)
	}
	var gotConn, wrote atomic.Bool
	trace := &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				wrote.Store(true)
			}
		},
	}
	if u, err := url.Parse(r.URL); err == nil && PathMoves(u.EscapedPath()) {
		return 0, nil, &Error{Code: CodeInvalidArguments, Outcome: NotSent,
			Message: "The request's path has a segment that would move it elsewhere; it was not sent.",
			Hint:    "Pass ids as a read tool returned them.", Err: &TransportError{Method: r.Method, Path: r.Path, Err: errPathMoves}}
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), r.Method, r.URL, rd)
	if err != nil {
		return 0, nil, Unreachable(who, &TransportError{Method: r.Method, Path: r.Path, Err: err})
	}
	req.Header.Set("Accept", "application/json")
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Prepare != nil {
		r.Prepare(req)
	}
	if r.Write {
		neverReplayed(req)
	}
	resp, err := c.Do(req)
	if err != nil {
		written := wrote.Load() || (gotConn.Load() && !isDialError(err))
		return 0, nil, TransportFailure(who, &TransportError{Method: r.Method, Path: r.Path, Written: written, Err: err}, r.Write)
	}
	defer resp.Body.Close()
	if r.Answered != nil {
		r.Answered(resp.Header)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes))
	if err != nil {
		return 0, nil, TransportFailure(who, &TransportError{Method: r.Method, Path: r.Path, Written: true,
			Err: fmt.Errorf("read answer: %w", err)}, r.Write)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return 0, nil, Redirected(who, r, resp.StatusCode, resp.Header.Get("Location"))
	}
	return resp.StatusCode, raw, nil
}

// NoRedirects is a copy of c that never follows a redirect: the answer
// is the 3xx itself, which Exchange fails. Following one would carry the
// system's secret to wherever Location points and, on a 307 or 308, send
// a write's body a second time.
func NoRedirects(c *http.Client) *http.Client {
	out := *c
	out.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &out
}

// RedirectError is a 3xx answer, kept as an *Error's cause for logs.
type RedirectError struct {
	Method, Path, Location string
	Status                 int
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s %s answered %d, a redirect to %q, which is not followed", e.Method, e.Path, e.Status, e.Location)
}

// Redirected maps a 3xx answer, which is never followed: a write may have
// been applied before the system answered it (Unknown, never sent again);
// a read changed nothing.
func Redirected(who string, r Request, status int, location string) *Error {
	cause := &RedirectError{Method: r.Method, Path: r.Path, Location: location, Status: status}
	if r.Write {
		return Unknowable(cause)
	}
	return &Error{Code: "system_redirected", Outcome: NotSent, Err: cause,
		Message: fmt.Sprintf("%s answered with a redirect (%d), which is not followed; nothing was changed.", who, status),
		Hint:    "Hand this call to a person: the system's address may have moved."}
}

// neverReplayed keeps Go's transport from resending a write it may
// already have written, on a reused connection that broke: it resends a
// request it thinks replayable, and a request with an Idempotency-Key or
// X-Idempotency-Key header it does. A write is sent again by its caller
// or by no one, so those headers go out under their lower-case names
// (header names are case-insensitive; the transport looks only for the
// canonical ones).
func neverReplayed(req *http.Request) {
	for _, k := range []string{"Idempotency-Key", "X-Idempotency-Key"} {
		if v, ok := req.Header[k]; ok {
			delete(req.Header, k)
			req.Header[strings.ToLower(k)] = v
		}
	}
}

// Undecodable is a 2xx answer that could not be decoded: the system
// answered, so a write may have been applied (Unknown); a read is
// Unreachable.
func Undecodable(who string, r Request, err error) *Error {
	return TransportFailure(who, &TransportError{Method: r.Method, Path: r.Path, Written: true,
		Err: fmt.Errorf("decode answer: %w", err)}, r.Write)
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// FailedAnswer maps an error answer no rule of the system's explains: a
// 5xx answer to a write may have been applied before it failed (Unknown),
// to a read it changed nothing and may be retried (system_error); any
// other is a refusal (system_rejected). who names the system and cause,
// the answer, is kept for logs.
func FailedAnswer(who string, status int, cause error, write bool) *Error {
	if status >= 500 {
		if write {
			return Unknowable(cause)
		}
		return &Error{Code: "system_error", Outcome: NotSent, Retryable: true, Err: cause,
			Message: who + " failed to answer; nothing was changed.", Hint: "Try again in a moment."}
	}
	return &Error{Code: "system_rejected", Outcome: Refused, Err: cause,
		Message: who + " refused the request; nothing was changed.",
		Hint:    "Hand this call to a person; do not retry it."}
}
