package api

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/web/kit"
)

// apiBase is where the versioned JSON API lives.
const apiBase = "/api/v1"

// apiOp documents one API operation for the OpenAPI document.
type apiOp struct {
	summary string
	// request names the body's schema in components; empty for none.
	request string
	// response names the success body's schema; status is its status.
	response string
	status   int
	query    []string
	// params are query parameters with schemas of their own (not plain
	// text).
	params []any
	// headers are the success answer's response headers.
	headers map[string]any
	// idempotencyKey marks the operation that takes an Idempotency-Key.
	idempotencyKey bool
	// replay is the description of a 200 answering with an earlier
	// result (deduplicated: true) beside the status of a new one.
	replay string
	// public marks a route that takes no key and has no rate limit.
	public bool
}

// apiErrors are the error statuses every bearer route may answer, each with
// the Error body.
var apiErrors = map[int]string{
	400: "The request could not be read: malformed_json, unknown_field (named in fields), json_duplicate_key (a key named twice), invalid_text, a bad parameter.",
	401: "missing_api_key or invalid_api_key; key_revoked or assistant_disabled when that happened while the request ran (nothing was recorded).",
	403: "Not allowed: action_not_enabled, action_not_allowed, action_disabled, blocked_after_refusal, customer_not_vouched, paused_by_person.",
	404: "not_found (also another assistant's objects), unknown_tool.",
	409: "stale_version, illegal_transition, task_not_active, task_expired, policy_changed (retryable), idempotency_key_in_use, not_completed.",
	413: "body_too_large: the body is over 256 KiB; event_too_large: a conversation event over 32 KiB.",
	422: "invalid (the fields are named in fields), invalid_arguments, idempotency_key_reused, no_compensation, handoff_needs_task, and the system's own refusals.",
	429: "rate_limited, event_rate_limited or conversation_event_limit, with Retry-After saying when to try again; proposal_budget_spent, handoff_limit.",
	500: "Something went wrong on our side; retryable.",
	502: "The business system answered with an error of its own (its code, retryable flag and hint).",
}

// apiDocs documents every route of the JSON API, keyed "METHOD path" as in
// the route table. The drift test fails when a route has no entry here or
// an entry has no route.
var apiDocs = map[string]apiOp{
	"GET /api/v1/openapi.json": {summary: "This OpenAPI 3.1 document.", response: "", status: 200, public: true},
	"GET /api/v1/invocations/:id/receipt": {summary: "The signed receipt of a completed write (or one reversed since): a compact JWS, Ed25519 (alg EdDSA), of what was changed where, with which arguments, the system's reference and the read-back's evidence; verify it with the key of /receipts/jwks.json named by kid. 409 not_completed before.",
		response: "Receipt", status: 200},
	"GET /api/v1/receipts/jwks.json": {summary: "The public keys receipts are signed with, as a JSON Web Key Set (OKP, Ed25519).", response: "JWKS", status: 200, public: true},
	"GET /api/v1/tools": {summary: "The tools this assistant may use now, after the three filters; narrowed to a task's actions with ?task=, searched with ?q=.",
		response: "ToolList", status: 200, query: []string{"task", "q"}},
	"POST /api/v1/tools/:name": {summary: "Run a read tool for the task's customer.", request: "ReadToolRequest", response: "ReadResult", status: 200, query: []string{"task"}},
	"POST /api/v1/tasks": {summary: "Open a task: the durable boundary of one assignment. Its limits stay within the maxima an admin set for the assistant (422 naming the field above one). " +
		"Its customer must be vouched for by the business: a customer_assertion its site signed, or the assistant's any-customer grant (403 customer_not_vouched otherwise); an unknown customer answers like a known one.",
		request: "NewTask", response: "Task", status: 201},
	"GET /api/v1/tasks/:id": {summary: "A task with its budget left and its invocations.", response: "Task", status: 200},
	"POST /api/v1/tasks/:id/pause": {summary: "Pause a task: once this returns no further write leaves; one already on its way may finish.",
		request: "ExpectedVersion", response: "Task", status: 200},
	"POST /api/v1/tasks/:id/resume": {summary: "Resume a paused task; its budget and unresolved calls are kept. A pause made by a person is lifted only by a person: 403 paused_by_person.", request: "ExpectedVersion", response: "Task", status: 200},
	"POST /api/v1/tasks/:id/cancel": {summary: "Cancel a task; undoes nothing already done.", request: "ExpectedVersion", response: "Task", status: 200},
	"POST /api/v1/tasks/:id/invocations": {summary: "Propose a write: dry-run it and route it by policy. 201, or 200 with deduplicated:true (the same request in this conversation within ten minutes, while the earlier one is live or completed). After a policy refusal on a target, any proposal on it for the same customer, in any task, is a 409 blocked_after_refusal until a person lifts the block.",
		request: "Proposal", response: "Invocation", status: 201, idempotencyKey: true,
		replay: "The earlier invocation, with deduplicated: true: the same request in this conversation within ten minutes (while that one is live or completed), or a repeated Idempotency-Key with the same request."},
	"GET /api/v1/invocations/:id": {summary: "An invocation: state, quote, result, error, verification and the sentence to say. " +
		"With ?wait= it answers as soon as the invocation leaves the state it is in (or the one named by ?state=), at once when it is terminal, " +
		"or when the wait runs out with its state then: a long poll, instead of asking again and again.",
		response: "Invocation", status: 200, params: waitParams, headers: waitHeaders},
	"POST /api/v1/invocations/:id/reconcile": {summary: "Inspect an unverified invocation (read-only towards the system).", response: "Invocation", status: 200},
	"POST /api/v1/invocations/:id/reverse": {summary: "Propose the compensation of a completed invocation. 201, or 200 with deduplicated:true when one is already live; 422 no_compensation when the action has none that can be proposed automatically.",
		response: "Invocation", status: 201, replay: "The compensation already live, with deduplicated: true."},
	"POST /api/v1/conversations/:id/events": {summary: "Report what the assistant did with a request. A conversation id belongs to the assistant that used it first; to any other it is a 404. Your report counts in the business's metrics only in a conversation with your task for a vouched customer (or by an admin's grant); the rest is shown apart. At most 300 events a minute and 6,000 an hour per assistant and 60 an hour per conversation (429 with Retry-After), 32 KiB each (413).",
		request: "ConversationEvent", response: "RecordedConversationEvent", status: 201},
	"GET /api/v1/conversations/:id": {summary: "Where the conversation's latest hand-off to a person stands: waiting (nobody took it yet), taken, resolved (a person dealt with the customer), or given_back (yours again: read the note for what to do next); handoff is null when it never handed off. The handoff.resolved and handoff.given_back webhooks say the same when it happens. Another assistant's conversation is a 404.",
		response: "Conversation", status: 200},
}

// handleOpenAPI answers GET /api/v1/openapi.json.
func (h *Handler) handleOpenAPI(c echo.Context) error {
	return c.JSON(http.StatusOK, h.OpenAPI())
}

// OpenAPI builds the OpenAPI 3.1 document of the JSON API from the route
// table and apiDocs; an entry of either without the other still appears
// (marked x-undocumented or x-no-route) so the drift test can see it.
func (h *Handler) OpenAPI() map[string]any {
	ops := map[string]map[string]any{}
	add := func(method, path string, op apiOp, known bool, routed bool) {
		p := openAPIPath(path)
		if ops[p] == nil {
			ops[p] = map[string]any{}
		}
		o := map[string]any{"summary": op.summary, "operationId": operationID(method, path)}
		if !known {
			o["x-undocumented"] = true
		}
		if !routed {
			o["x-no-route"] = true
		}
		var params []any
		for _, seg := range strings.Split(path, "/") {
			if name, ok := strings.CutPrefix(seg, ":"); ok {
				params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string", "maxLength": kit.MaxParamBytes}})
			}
		}
		for _, q := range op.query {
			params = append(params, map[string]any{"name": q, "in": "query", "schema": map[string]any{"type": "string", "maxLength": kit.MaxParamBytes}})
		}
		params = append(params, op.params...)
		if op.idempotencyKey {
			params = append(params, map[string]any{"name": "Idempotency-Key", "in": "header", "schema": map[string]any{"type": "string", "maxLength": maxIdempotencyKeyLen},
				"description": "Stripe semantics: the same key with the same request replays the first result (marked deduplicated); with another request it is a 422; while the first is in progress, a 409. A claim whose request has not finished after a minute (it crashed) is taken over by the next request with the key."})
		}
		if params != nil {
			o["parameters"] = params
		}
		if op.request != "" {
			o["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": ref(op.request)}}}
		}
		schema := freeObject("The OpenAPI 3.1 document")
		if op.response != "" {
			schema = ref(op.response)
		}
		content := map[string]any{"application/json": map[string]any{"schema": schema}}
		success := map[string]any{"description": http.StatusText(op.status), "content": content}
		if op.headers != nil {
			success["headers"] = op.headers
		}
		responses := map[string]any{strconv.Itoa(op.status): success}
		if op.replay != "" {
			responses["200"] = map[string]any{"description": op.replay, "content": content}
		}
		if op.public {
			// No key, no rate limit; only a query of bad text (NUL,
			// invalid UTF-8, oversized) is refused.
			o["security"] = []any{}
			responses["400"] = map[string]any{"$ref": "#/components/responses/Error400"}
		} else {
			o["security"] = []any{map[string]any{"bearer": []any{}}}
			for st := range apiErrors {
				responses[strconv.Itoa(st)] = map[string]any{"$ref": "#/components/responses/Error" + strconv.Itoa(st)}
			}
		}
		o["responses"] = responses
		ops[p][strings.ToLower(method)] = o
	}
	routed := map[string]bool{}
	for _, r := range h.Routes() {
		if !strings.HasPrefix(r.Path, apiBase+"/") {
			continue
		}
		key := r.Method + " " + r.Path
		routed[key] = true
		op, known := apiDocs[key]
		add(r.Method, r.Path, op, known, true)
	}
	for _, key := range slices.Sorted(maps.Keys(apiDocs)) {
		if !routed[key] {
			method, path, _ := strings.Cut(key, " ")
			add(method, path, apiDocs[key], true, false)
		}
	}
	paths := map[string]any{}
	for p, o := range ops {
		paths[p] = o
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Countersign assistant API", "version": "1",
			"description": "The assistant's side of Countersign: list the tools it may use, read, propose writes that a person or policy authorises, and follow them to a verified result.",
			"license": map[string]any{"name": "Proprietary: no licence is granted with this document",
				// An SPDX expression for a licence of our own, as info-license-strict asks.
				"identifier": "LicenseRef-Proprietary"}},
		"servers": []any{map[string]any{"url": apiBase}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "An API key issued on /admin/assistants (csk_live_…)."}},
			"responses":       errorResponses(),
			"schemas":         apiSchemas(),
		},
	}
}

// openAPIPath turns an Echo path into an OpenAPI one relative to the
// server URL: /api/v1/tasks/:id → /tasks/{id}.
func openAPIPath(path string) string {
	segs := strings.Split(strings.TrimPrefix(path, apiBase), "/")
	for i, seg := range segs {
		if name, ok := strings.CutPrefix(seg, ":"); ok {
			segs[i] = "{" + name + "}"
		}
	}
	return strings.Join(segs, "/")
}

func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(strings.TrimPrefix(path, apiBase), "/") {
		seg = strings.TrimPrefix(seg, ":")
		seg = strings.TrimSuffix(seg, ".json")
		if seg != "" {
			b.WriteString(strings.ToUpper(seg[:1]) + seg[1:])
		}
	}
	return b.String()
}

// errorResponses are the error answers of components, one a status: each
// the Error body, with Retry-After on a 429 and WWW-Authenticate on a 401.
func errorResponses() map[string]any {
	out := map[string]any{}
	for st, desc := range apiErrors {
		r := map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}
		switch st {
		case http.StatusTooManyRequests:
			r["headers"] = map[string]any{"Retry-After": map[string]any{"description": "seconds to wait", "schema": typ("integer")}}
		case http.StatusUnauthorized:
			r["headers"] = map[string]any{"WWW-Authenticate": map[string]any{"description": `Bearer realm="countersign"`, "schema": typ("string")}}
		}
		out["Error"+strconv.Itoa(st)] = r
	}
	return out
}
