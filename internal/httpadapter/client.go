package httpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync/atomic"

	"countersign/internal/adapter"
)

// maxAnswerBytes bounds what the adapter reads from a system.
const maxAnswerBytes = 4 << 20

// systemError is an error answer: its status and decoded body. It is kept
// as an error's cause for logs and never shown to a caller.
type systemError struct {
	Status int
	Code   string
	Body   any
}

func (e *systemError) Error() string {
	return fmt.Sprintf("the system answered %d %s", e.Status, e.Code)
}

// transportError is a call that got no usable answer. Written is false only
// when the request provably never left.
type transportError struct {
	Method, Path string
	Written      bool
	Err          error
}

func (e *transportError) Error() string {
	state := "not sent"
	if e.Written {
		state = "sent, no answer"
	}
	return fmt.Sprintf("%s %s (%s): %v", e.Method, e.Path, state, e.Err)
}

func (e *transportError) Unwrap() error { return e.Err }

// read GETs path; every failure is NotSent (a read changes nothing).
func (a *Adapter) read(ctx context.Context, path string) (any, error) {
	return a.do(ctx, http.MethodGet, path, "", nil, false, false)
}

// do sends one request. A write carries key in the idempotency header.
func (a *Adapter) do(ctx context.Context, method, path, key string, body any, hasBody, write bool) (any, error) {
	var rd io.Reader
	if hasBody {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("httpadapter: encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(raw)
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
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, a.base+path, rd)
	if err != nil {
		return nil, a.unreachable(&transportError{Method: method, Path: path, Err: err})
	}
	req.Header.Set("Accept", "application/json")
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set(a.idemHeader, key)
	}
	a.authorize(req)
	resp, err := a.http.Do(req)
	if err != nil {
		written := wrote.Load() || (gotConn.Load() && !isDialError(err))
		return nil, a.transportFailure(&transportError{Method: method, Path: path, Written: written, Err: err}, write)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return nil, a.transportFailure(&transportError{Method: method, Path: path, Written: true, Err: fmt.Errorf("read answer: %w", err)}, write)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if len(bytes.TrimSpace(raw)) == 0 {
			return map[string]any{}, nil
		}
		v, err := decodeJSON(raw)
		if err != nil {
			return nil, a.transportFailure(&transportError{Method: method, Path: path, Written: true, Err: fmt.Errorf("decode answer: %w", err)}, write)
		}
		return v, nil
	}
	se := &systemError{Status: resp.StatusCode}
	se.Body, _ = decodeJSON(raw)
	if v, ok := lookupPointer(se.Body, a.errs.codePtr); ok {
		se.Code, _ = v.(string)
	}
	return nil, a.errs.mapAnswer(a.name, se, write)
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// transportFailure maps a call without an answer: a write that may have
// left is Unknown; anything else provably changed nothing.
func (a *Adapter) transportFailure(te *transportError, write bool) *adapter.Error {
	if te.Written && write {
		return adapter.Unknowable(te)
	}
	return a.unreachable(te)
}

func (a *Adapter) unreachable(te *transportError) *adapter.Error {
	return &adapter.Error{Code: adapter.CodeUnreachable, Outcome: adapter.NotSent, Retryable: true,
		Message: fmt.Sprintf("%s could not be reached; nothing was changed.", a.name),
		Hint:    "Try again in a moment; if it keeps failing, hand the conversation to a person.", Err: te}
}

// errorMap is a file's error mapping.
type errorMap struct {
	codePtr, messagePtr string
	rules               []errorRule
}

type errorRule struct {
	statuses   []int
	classes    []int
	systemCode string
	when       *expr
	err        adapter.Error
	field      string
}

func (r errorRule) matches(se *systemError) bool {
	if (len(r.statuses) > 0 || len(r.classes) > 0) && !slices.Contains(r.statuses, se.Status) && !slices.Contains(r.classes, se.Status/100) {
		return false
	}
	if r.systemCode != "" && r.systemCode != se.Code {
		return false
	}
	if r.when != nil {
		ok, err := r.when.bool(map[string]any{"status": int64(se.Status), "body": se.Body})
		if err != nil || !ok {
			return false
		}
	}
	return true
}

// mapAnswer turns an error answer into an *adapter.Error. The first rule
// that matches wins, except that a rule can never make a 5xx answer to a
// write anything but Unknown: it may have been applied before it failed.
// Without a rule: 5xx on a write is Unknown, on a read NotSent and
// retryable; 4xx is Refused (system_rejected).
func (m errorMap) mapAnswer(system string, se *systemError, write bool) *adapter.Error {
	for _, r := range m.rules {
		if !r.matches(se) {
			continue
		}
		e := r.err
		e.Err = se
		if r.field != "" {
			e.Fields = map[string]string{r.field: e.Message}
		}
		if se.Status >= 500 && write && e.Outcome != adapter.Unknown {
			break
		}
		return &e
	}
	if se.Status >= 500 {
		if write {
			return adapter.Unknowable(se)
		}
		return &adapter.Error{Code: "system_error", Outcome: adapter.NotSent, Retryable: true, Err: se,
			Message: system + " failed to answer; nothing was changed.", Hint: "Try again in a moment."}
	}
	return &adapter.Error{Code: "system_rejected", Outcome: adapter.Refused, Err: se,
		Message: system + " refused the request; nothing was changed.",
		Hint:    "Hand this call to a person; do not retry it."}
}
