package httpadapter

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"

	"countersign/internal/adapter"
)

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

// read GETs path; every failure is NotSent (a read changes nothing).
func (a *Adapter) read(ctx context.Context, path string) (any, error) {
	return a.call(ctx, &exchange{method: http.MethodGet, path: path})
}

// page is read that also returns the answer's header and size in bytes.
func (a *Adapter) page(ctx context.Context, path string) (any, http.Header, int, error) {
	x := &exchange{method: http.MethodGet, path: path}
	answer, err := a.call(ctx, x)
	return answer, x.header, x.size, err
}

// exchange is one request and what came back besides the decoded answer.
type exchange struct {
	method, path string
	// key goes in the idempotency header of a write, when the file names
	// one.
	key            string
	body           any
	hasBody, write bool
	// form, when not "", sends body form-encoded in that style.
	form formStyle
	// headers are extra headers (a precondition's If-Match); refusal is
	// the precondition's, tried before the file's error rules and on a 2xx
	// answer too (a conditional filter that matched nothing).
	headers map[string]string
	refusal *errorRule
	// header and size are the answer's header and its size in bytes, set
	// by call.
	header http.Header
	size   int
	// gql, when set, is the GraphQL operation the request posts: its
	// answer is read as graphqlAnswer says.
	gql *graphqlOp
}

// call sends x and decodes the answer.
func (a *Adapter) call(ctx context.Context, x *exchange) (any, error) {
	method, path, key, refusal := x.method, x.path, x.key, x.refusal
	r := adapter.Request{Method: method, URL: a.base + path, Path: path, Write: x.write,
		Answered: func(h http.Header) { x.header = h }, Prepare: func(req *http.Request) {
			if key != "" && a.idemHeader != "" {
				req.Header.Set(a.idemHeader, key)
			}
			for k, v := range x.headers {
				req.Header.Set(k, v)
			}
		}}
	write := x.write
	if x.hasBody {
		raw, contentType, err := encodeBody(x.body, x.form)
		if err != nil {
			return nil, a.broken(fmt.Errorf("httpadapter: encode the body of %s %s: %w", method, path, err))
		}
		r.Body = raw
		if contentType != contentTypeJSON {
			prepare := r.Prepare
			r.Prepare = func(req *http.Request) {
				prepare(req)
				req.Header.Set("Content-Type", contentType)
			}
		}
	}
	status, raw, err := a.authorizedExchange(ctx, r)
	if err != nil {
		return nil, err
	}
	x.size = len(raw)
	ok := status >= 200 && status < 300
	var answer any
	if ok {
		if len(bytes.TrimSpace(raw)) == 0 {
			answer = map[string]any{}
		} else if answer, err = decodeJSON(raw); err != nil {
			return nil, adapter.Undecodable(a.name, r, err)
		}
		if x.gql != nil {
			return a.graphqlAnswer(x.gql, answer, write)
		}
		if refusal == nil {
			return answer, nil
		}
	}
	se := &systemError{Status: status, Body: answer}
	if !ok {
		se.Body, _ = decodeJSON(raw)
	}
	if v, found := lookupPointer(se.Body, a.errs.codePtr); found {
		se.Code, _ = v.(string)
	}
	if refusal != nil && status < 500 && refusal.matches(se) {
		e := refusal.err
		e.Err = se
		return nil, &e
	}
	if ok {
		return answer, nil
	}
	return nil, a.errs.mapAnswer(a.name, se, write)
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
	return adapter.FailedAnswer(system, se.Status, se, write)
}
