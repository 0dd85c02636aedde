package httpadapter

import (
	"context"
	"fmt"
	"net/http"

	"countersign/internal/adapter"
)

// GraphQL answers most failures with 200, so the status alone says little.
// An answer is mapped by the file's error rules as the HTTP answer that
// means the same would be, so that the rules and their guarantees are the
// HTTP ones:
//
//   - errors[] without "data": the request was refused before it ran (it
//     does not parse or validate) — as a 400 answer, GraphQL over HTTP's own
//     status for it: refused, nothing ran;
//   - errors[] with "data" (even null): it ran and failed part-way — as a
//     5xx answer: on a write Unknown whatever a rule says (it may have been
//     applied), on a read not sent and retryable;
//   - a non-empty user_errors list: the mutation ran and refused — as a 422
//     answer: refused, with the rule its code matches.
//
// The system code a rule's system_code matches is errors[0].extensions.code
// or the first user error's code; a rule's when sees the whole answer as
// body. A transport failure after the request left is Unknown and never
// re-sent, as for any write (adapter.Exchange).
const (
	statusGraphQLRequestError = http.StatusBadRequest
	statusGraphQLFieldError   = http.StatusInternalServerError
	statusGraphQLUserErrors   = http.StatusUnprocessableEntity
)

// graphqlAnswer reads a decoded 2xx answer to op: the value at op's data,
// or the failure it carries, mapped as above. A read whose value is null
// (or missing) is not found.
func (a *Adapter) graphqlAnswer(op *graphqlOp, answer any, write bool) (any, error) {
	m, _ := answer.(map[string]any)
	data, ran := m["data"]
	if errs, _ := m["errors"].([]any); len(errs) > 0 {
		se := &systemError{Status: statusGraphQLRequestError, Body: answer}
		if ran {
			se.Status = statusGraphQLFieldError
		}
		if code, ok := lookupPointer(errs[0], "/extensions/code"); ok {
			se.Code = text(code)
		}
		return nil, a.errs.mapAnswer(a.name, se, write)
	}
	if !ran {
		// Neither data nor errors: not a GraphQL answer. On a write it
		// may have been applied all the same.
		err := fmt.Errorf("httpadapter: %s answered a GraphQL %s without data or errors", a.name, op.kind())
		if write {
			return nil, adapter.Unknowable(err)
		}
		return nil, &adapter.Error{Code: "system_error", Outcome: adapter.NotSent, Retryable: true, Err: err,
			Message: a.name + " gave an answer that is not GraphQL; nothing was changed.", Hint: "Try again in a moment."}
	}
	if op.userErrors != nil {
		ues, _ := at(data, op.userErrors).([]any)
		if len(ues) > 0 {
			se := &systemError{Status: statusGraphQLUserErrors, Body: answer}
			if code, ok := lookupPointer(ues[0], "/code"); ok {
				se.Code = text(code)
			}
			return nil, a.errs.mapAnswer(a.name, se, write)
		}
	}
	v := at(data, op.data)
	if v == nil && !write {
		return nil, &adapter.Error{Code: adapter.CodeNotFound, Outcome: adapter.Refused,
			Message: fmt.Sprintf("%s has no such object.", a.name), Hint: "Use a read tool to find the object's id."}
	}
	return v, nil
}

func (op *graphqlOp) kind() string {
	if op.mutation {
		return "mutation"
	}
	return "query"
}

// at follows dotted field names from v; nil when one is missing.
func at(v any, path []string) any {
	for _, name := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[name]
	}
	return v
}

// graphqlRead posts the query op with its variables rendered from vars
// (cursor, when not "", set as op.cursor) and returns the value at its
// data and the answer's size in bytes.
func (a *Adapter) graphqlRead(ctx context.Context, op *graphqlOp, vars map[string]any, cursor string) (any, int, error) {
	body, err := renderBody(op.body, vars)
	if err != nil {
		return nil, 0, a.broken(err)
	}
	if cursor != "" {
		b := body.(map[string]any)
		vs := b["variables"].(map[string]any)
		vs[op.cursor] = cursor
	}
	x := &exchange{method: http.MethodPost, path: a.endpoint, body: body, hasBody: true, gql: op}
	answer, err := a.call(ctx, x)
	return answer, x.size, err
}

// said names a read for evidence: "GET /orders/1", or the operation.
func (op *graphqlOp) said(endpoint string) string {
	name := op.name
	if name == "" {
		name = "(unnamed)"
	}
	return fmt.Sprintf("POST %s, query %s", endpoint, name)
}

// fetch reads what a place of the file names: its GraphQL query when it
// has one, else its path as a GET. said is how the read is named in
// evidence.
func (a *Adapter) fetch(ctx context.Context, path *template, op *graphqlOp, vars map[string]any) (answer any, said string, err error) {
	if op != nil {
		answer, _, err = a.graphqlRead(ctx, op, vars, "")
		return answer, op.said(a.endpoint), err
	}
	p, err := path.render(vars, true)
	if err != nil {
		return nil, "", a.broken(err)
	}
	answer, err = a.read(ctx, p)
	return answer, "GET " + p, err
}

// fetchList is readList for a place of the file: its GraphQL query's
// pages when it has one, else its path's.
func (a *Adapter) fetchList(ctx context.Context, path *template, op *graphqlOp, vars map[string]any, items string, p *paging,
	enough int) (out []any, more, listed bool, err error) {
	if op != nil {
		return a.graphqlList(ctx, op, vars, items, p, enough)
	}
	rendered, err := path.render(vars, true)
	if err != nil {
		return nil, false, false, a.broken(err)
	}
	return a.readList(ctx, rendered, items, p, enough)
}
