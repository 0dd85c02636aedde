package api

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/assistants"
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
	// idempotencyKey marks the operation that takes an Idempotency-Key.
	idempotencyKey bool
}

// apiDocs documents every route of the JSON API, keyed "METHOD path" as in
// the route table. The drift test fails when a route has no entry here or
// an entry has no route.
var apiDocs = map[string]apiOp{
	"GET /api/v1/openapi.json": {summary: "This OpenAPI 3.1 document.", response: "", status: 200},
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
		request: "Proposal", response: "Invocation", status: 201, idempotencyKey: true},
	"GET /api/v1/invocations/:id":            {summary: "An invocation: state, quote, result, error, verification and the sentence to say.", response: "Invocation", status: 200},
	"POST /api/v1/invocations/:id/reconcile": {summary: "Inspect an unverified invocation (read-only towards the system).", response: "Invocation", status: 200},
	"POST /api/v1/invocations/:id/reverse":   {summary: "Propose the compensation of a completed invocation. 201, or 200 with deduplicated:true when one is already live; 422 no_compensation when the action has none that can be proposed automatically.", response: "Invocation", status: 201},
	"POST /api/v1/conversations/:id/events":  {summary: "Report what the assistant did with a request. A conversation id belongs to the assistant that used it first; to any other it is a 404.", request: "ConversationEvent", response: "ConversationEvent", status: 201},
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
		resp := map[string]any{"description": "Success"}
		if op.response != "" {
			resp["content"] = map[string]any{"application/json": map[string]any{"schema": ref(op.response)}}
		}
		responses := map[string]any{strconv.Itoa(op.status): resp}
		for _, st := range []int{400, 401, 403, 404, 409, 422, 429} {
			responses[strconv.Itoa(st)] = map[string]any{"$ref": "#/components/responses/Error"}
		}
		if path == apiBase+"/openapi.json" {
			responses = map[string]any{"200": resp}
		} else {
			o["security"] = []any{map[string]any{"bearer": []any{}}}
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
			"description": "The assistant's side of Countersign: list the tools it may use, read, propose writes that a person or policy authorises, and follow them to a verified result."},
		"servers": []any{map[string]any{"url": apiBase}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "An API key issued on /admin/assistants (csk_live_…)."}},
			"responses": map[string]any{"Error": map[string]any{"description": "An error",
				"content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}},
			"schemas": apiSchemas(),
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

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func obj(required []string, props map[string]any) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "required": required, "properties": props}
}

func typ(t string, desc ...string) map[string]any {
	m := map[string]any{"type": t}
	if len(desc) > 0 {
		m["description"] = desc[0]
	}
	return m
}

// withDesc is a copy of schema m with a description.
func withDesc(m map[string]any, desc string) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out["description"] = desc
	return out
}

func enum(values ...string) map[string]any { return map[string]any{"type": "string", "enum": values} }

// nullable is a copy of schema m that also allows null.
func nullable(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	out["type"] = []string{m["type"].(string), "null"}
	return out
}

// limited is a string of at most n characters.
func limited(n int, desc ...string) map[string]any {
	m := typ("string", desc...)
	m["maxLength"] = n
	return m
}

// limitedList is a list of at most items strings of at most n characters.
func limitedList(items, n int) map[string]any {
	return map[string]any{"type": "array", "maxItems": items, "items": limited(n)}
}

// limitedObject is a JSON object whose encoding is at most n bytes.
func limitedObject(n int) map[string]any {
	return map[string]any{"type": "object", "maxProperties": kit.MaxJSONKeys,
		"description": "at most " + strconv.Itoa(n) + " bytes as JSON, nested at most " + strconv.Itoa(kit.MaxJSONDepth) + " levels deep"}
}

func apiSchemas() map[string]any {
	str, integer, boolean, anyObj := typ("string"), typ("integer"), typ("boolean"), typ("object")
	anyJSON := map[string]any{"type": []string{"object", "null"}}
	strs := map[string]any{"type": "array", "items": str}
	when := map[string]any{"type": "string", "format": "date-time"}
	var intents, modes []string
	for _, i := range assistants.Intents {
		intents = append(intents, string(i))
	}
	for _, m := range assistants.Modes {
		modes = append(modes, string(m))
	}
	return map[string]any{
		"Error": obj([]string{"code", "message", "retryable"}, map[string]any{"code": str, "message": str, "retryable": boolean,
			"hint": str, "fields": map[string]any{"type": "object", "additionalProperties": str}, "details": anyObj}),
		"Tool": obj([]string{"name", "kind", "system", "description", "input_schema"}, map[string]any{"name": str, "title": str,
			"kind": enum("read", "write"), "system": str, "description": str, "input_schema": anyObj, "guidance": str,
			"mode": enum("confirm", "approval", "auto"), "risk": str, "limits": strs}),
		"ToolList": obj([]string{"tools"}, map[string]any{"tools": map[string]any{"type": "array", "items": ref("Tool")}}),
		"ReadToolRequest": obj(nil, map[string]any{"task": limited(maxTaskIDLen, "the task whose customer the read is for (or ?task=)"),
			"system": limited(maxSystemNameLen), "args": limitedObject(maxArgsBytes)}),
		"ReadResult": obj([]string{"data", "count", "truncated"}, map[string]any{"data": map[string]any{}, "count": integer, "truncated": boolean}),
		"NewTask": obj([]string{"customer_ref", "conversation_id", "allowed_actions"}, map[string]any{
			"customer_ref":    limited(maxCustomerRefLen, "the customer's e-mail; compared without case, stored trimmed and in lower case"),
			"conversation_id": limited(maxConversationIDLen), "allowed_actions": withDesc(limitedList(maxAllowedActions, maxActionNameLen),
				"the write actions the task may propose (\"action\" or \"system/action\"), at least one; read tools work in every task, "+
					"so naming one here is accepted and changes nothing"),
			"systems":         withDesc(limitedList(maxTaskSystems, maxSystemNameLen), "the systems the task may use; a task vouched for by an assertion is limited to the assertion's system"),
			"write_budget":    typ("integer", "default 5 (or the assistant's maximum when lower); at most the assistant's maximum (20 unless an admin changed it)"),
			"inflight_limit":  typ("integer", "default 2 (or the assistant's maximum when lower); at most the assistant's maximum (5 unless an admin changed it)"),
			"rate_per_minute": typ("integer", "default 10 (or the assistant's maximum when lower); at most the assistant's maximum (30 unless an admin changed it)"),
			"expires_at":      when,
			"customer_assertion": limited(maxAssertionLen, "the task assertion the business's site signed for this assistant and customer: "+
				"base64url(JSON {sub, sys, aud, iat, exp, nonce}) \".\" base64url(HMAC-SHA256(system secret, \"countersign task assertion v1.\" + payload)); "+
				"single use, at most 10 minutes; required unless an admin let the assistant act for any customer")}),
		"Task": obj([]string{"id", "customer_ref", "conversation_id", "state", "version", "allowed_actions", "write_budget", "writes_used",
			"inflight_limit", "rate_per_minute", "expires_at"}, map[string]any{"id": str, "customer_ref": str, "conversation_id": str,
			"state": enum("active", "paused", "cancelled", "closed"), "version": integer, "allowed_actions": strs, "systems": strs,
			"write_budget": integer, "writes_used": integer, "budget_left": integer, "inflight_limit": integer, "rate_per_minute": integer,
			"expires_at": when, "created_at": when, "invocations": map[string]any{"type": "array", "items": ref("Invocation")},
			"invocations_by_state": map[string]any{"type": "object", "additionalProperties": integer}}),
		"ExpectedVersion": obj([]string{"expected_version"}, map[string]any{"expected_version": integer}),
		"Proposal": obj([]string{"action", "args"}, map[string]any{"action": limited(maxActionNameLen), "system": limited(maxSystemNameLen),
			"args": limitedObject(maxArgsBytes), "summary": limited(maxSummaryLen, "your own one-line description; the quote wins when they disagree")}),
		"Invocation": obj([]string{"id", "task_id", "action", "target", "state", "version", "args", "quote", "summary", "summary_disagrees",
			"idempotency_key", "deduplicated", "next", "result", "error", "reason", "say"}, map[string]any{"id": str, "task_id": str, "system": str, "action": str,
			"target": obj([]string{"system", "id", "display"}, map[string]any{"system": str, "kind": str, "id": str, "display": str}),
			"state": enum("proposed", "awaiting_confirmation", "awaiting_approval", "approved", "dispatching", "completed", "failed",
				"unverified", "not_dispatched", "rejected", "expired", "reversed"),
			"state_label": str, "version": integer,
			"args": obj([]string{"proposed", "approved", "effective"}, map[string]any{"proposed": anyJSON, "approved": anyJSON, "effective": anyJSON}),
			"quote": obj([]string{"title", "lines", "consequences", "amount_cents", "effective_at", "target_version"}, map[string]any{"title": str,
				"lines":        map[string]any{"type": "array", "items": obj([]string{"label", "to"}, map[string]any{"label": str, "from": str, "to": str})},
				"consequences": strs, "amount_cents": nullable(integer), "currency": str, "effective_at": nullable(when), "target_version": str, "reversible": boolean}),
			"summary": str, "summary_disagrees": boolean, "idempotency_key": str, "deduplicated": boolean,
			"next": obj([]string{"kind", "url"}, map[string]any{"kind": enum("confirm", "approval", "dispatch", "none"), "url": str, "message": str,
				"proofs": withDesc(strs, "how the customer may prove who they are on the confirmation page: code, account, assertion"),
				"elicitation": withDesc(enum("accepted", "declined", "cancelled", "sent"),
					"over MCP only: the confirmation page went to the customer's client as a URL-mode elicitation, not in url; what the customer answered their client, or sent")}),
			"result": nullable(obj(nil, map[string]any{"reference": str,
				"short_reference": withDesc(str, "the reference the customer's page shows (\"Cancellation #75CDDA\"); say uses it"), "deduplicated": boolean})),
			"error": withDesc(nullable(obj(nil, map[string]any{"code": str, "message": str, "retryable": boolean, "hint": str, "outcome": str})),
				"the structured error of a failed or unverified call; null once the outcome is known to be completed (or reversed)"),
			"reason": withDesc(nullable(obj([]string{"code", "message"}, map[string]any{
				"code": withDesc(str, "not dispatched: task_paused, task_cancelled, task_closed, task_expired, budget_spent, global_stop, "+
					"policy_disabled, route_changed, target_changed, system_unreachable, system_not_connected; rejected: rejected_by_agent, "+
					"declined_by_customer, superseded; expired: approval_expired, confirmation_expired"),
				"message": withDesc(str, "the reason in a sentence; for a rejection, the words of the person who rejected it")})),
				"why it was not dispatched, rejected, declined or expired; null in every other state"),
			"verification": obj(nil, map[string]any{"verified": boolean, "evidence": str, "at": when}),
			"say":          typ("string", "the sentence you may tell the customer now"), "route_reason": str, "deadline_at": when, "created_at": when,
			"reconciliation": obj(nil, map[string]any{"conclusive": boolean, "found": boolean})}),
		"ConversationEvent": obj([]string{"intent", "mode"}, map[string]any{"id": integer, "conversation_id": str, "assistant_id": str,
			"task_id": limited(maxTaskIDLen), "intent": enum(intents...), "mode": enum(modes...), "at": when,
			"summary": limited(maxSummaryLen, "required for handed_off: what the agent needs instead of the transcript"),
			"facts":   limitedObject(maxFactsBytes), "would_propose": obj([]string{"action"}, map[string]any{"action": limited(maxActionNameLen),
				"args": limitedObject(maxArgsBytes)})}),
	}
}
