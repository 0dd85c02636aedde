package api

import (
	"math"
	"strconv"

	"countersign/internal/assistants"
	"countersign/web/kit"
)

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func obj(required []string, props map[string]any) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "required": required, "properties": props}
}

// strict is a request body's object: decodeJSON refuses a field it does not
// list (400 unknown_field).
func strict(required []string, props map[string]any) map[string]any {
	m := obj(required, props)
	m["additionalProperties"] = false
	return m
}

// nullable is schema m that may also be null.
func nullable(m map[string]any) map[string]any {
	t, ok := m["type"].(string)
	if !ok {
		return map[string]any{"anyOf": []any{m, typ("null")}}
	}
	out := withDesc(m, "")
	out["type"] = []any{t, "null"}
	if d, ok := m["description"]; ok {
		out["description"] = d
	} else {
		delete(out, "description")
	}
	return out
}

// required is a string the server trims and refuses when nothing is left:
// at least one character that is not a space, and at most n.
func required(n int, desc ...string) map[string]any {
	m := limited(n, desc...)
	m["minLength"] = 1
	m["pattern"] = `\S`
	return m
}

// between is an integer from lo to hi.
func between(lo, hi int, desc ...string) map[string]any {
	m := typ("integer", desc...)
	m["minimum"], m["maximum"] = lo, hi
	return m
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

// limitedObject is a JSON object of any members whose encoding is at most
// n bytes.
func limitedObject(n int) map[string]any {
	return map[string]any{"type": "object", "additionalProperties": true, "maxProperties": kit.MaxJSONKeys,
		"description": "at most " + strconv.Itoa(n) + " bytes as JSON, nested at most " + strconv.Itoa(kit.MaxJSONDepth) + " levels deep"}
}

// freeObject is a JSON object whose members are not fixed (an action's
// arguments, a JSON Schema): it says so (additionalProperties: true), so
// that a generated client types it as a record of any values, not as an
// object that may have none.
func freeObject(desc ...string) map[string]any {
	m := typ("object", desc...)
	m["additionalProperties"] = true
	return m
}

// errorDetailsSchema is an error's details: facts for programs, whose
// members depend on the code; those the API sends are listed.
func errorDetailsSchema() map[string]any {
	m := withDesc(obj(nil, map[string]any{
		"original_code": typ("string", "blocked_after_refusal: the code of the policy refusal that blocked the target"),
		"original_hint": typ("string", "blocked_after_refusal: that refusal's hint"),
		"systems":       withDesc(map[string]any{"type": "array", "items": typ("string")}, "handoff_needs_task: the systems offering the action"),
		"bound":         enum("assistant_minute", "assistant_hour", "conversation_hour"),
		"limit":         typ("integer", "event_rate_limited, conversation_event_limit: the bound's limit"),
	}), "facts for programs beside the message; the members depend on the code")
	m["additionalProperties"] = true
	return m
}

func apiSchemas() map[string]any {
	str, integer, boolean, anyObj := typ("string"), typ("integer"), typ("boolean"), freeObject()
	strs := map[string]any{"type": "array", "items": str}
	when := map[string]any{"type": "string", "format": "date-time"}
	var intents, modes []string
	for _, i := range assistants.Intents {
		intents = append(intents, string(i))
	}
	for _, m := range assistants.Modes {
		modes = append(modes, string(m))
	}
	actionList := withDesc(limitedList(maxAllowedActions, maxActionNameLen),
		"the write actions the task may propose (\"action\" or \"system/action\"), at least one; read tools work in every task, "+
			"so naming one here is accepted and changes nothing")
	actionList["minItems"] = 1
	actionList["items"] = required(maxActionNameLen)
	systemList := withDesc(limitedList(maxTaskSystems, maxSystemNameLen), "the systems the task may use; a task vouched for by an assertion is limited to the assertion's system")
	systemList["items"] = required(maxSystemNameLen)
	return map[string]any{
		"Error": obj([]string{"code", "message", "retryable"}, map[string]any{"code": str, "message": str, "retryable": boolean,
			"hint": str, "fields": map[string]any{"type": "object", "additionalProperties": str}, "details": errorDetailsSchema()}),
		"Tool": obj([]string{"name", "title", "kind", "system", "description", "input_schema"}, map[string]any{"name": str, "title": str,
			"kind": enum("read", "write"), "system": str, "description": str, "input_schema": freeObject("the JSON Schema of the tool's arguments"), "guidance": str,
			"mode": enum("confirm", "approval", "auto"), "risk": str, "limits": strs}),
		"ToolList": obj([]string{"tools"}, map[string]any{"tools": map[string]any{"type": "array", "items": ref("Tool")}}),
		"ReadToolRequest": strict(nil, map[string]any{"task": limited(maxTaskIDLen, "the task whose customer the read is for (or ?task=); one of the two is required"),
			"system": limited(maxSystemNameLen), "args": limitedObject(maxArgsBytes)}),
		"ReadResult": obj([]string{"data", "count", "truncated"}, map[string]any{"data": map[string]any{}, "count": integer, "truncated": boolean}),
		"NewTask": strict([]string{"customer_ref", "conversation_id", "allowed_actions"}, map[string]any{
			"customer_ref":    required(maxCustomerRefLen, "the customer's e-mail; compared without case, stored trimmed and in lower case"),
			"conversation_id": required(maxConversationIDLen), "allowed_actions": actionList, "systems": systemList,
			"write_budget":    between(0, 1000, "default 5 (or the assistant's maximum when lower); at most the assistant's maximum (20 unless an admin changed it)"),
			"inflight_limit":  between(1, 100, "default 2 (or the assistant's maximum when lower); at most the assistant's maximum (5 unless an admin changed it)"),
			"rate_per_minute": between(1, 10000, "default 10 (or the assistant's maximum when lower); at most the assistant's maximum (30 unless an admin changed it)"),
			"expires_at":      withDesc(when, "default 24 hours from now; in the future, and within 30 days"),
			"customer_assertion": limited(maxAssertionLen, "the task assertion the business's site signed for this assistant and customer: "+
				"base64url(JSON {sub, sys, aud, iat, exp, nonce}) \".\" base64url(HMAC-SHA256(system secret, \"countersign task assertion v1.\" + payload)); "+
				"single use, at most 10 minutes; required unless an admin let the assistant act for any customer")}),
		"Task": obj([]string{"id", "customer_ref", "conversation_id", "state", "version", "allowed_actions", "systems", "write_budget", "writes_used",
			"budget_left", "inflight_limit", "rate_per_minute", "expires_at", "created_at"}, map[string]any{"id": str, "customer_ref": str, "conversation_id": str,
			"state": enum("active", "paused", "cancelled", "closed"), "version": integer, "allowed_actions": strs, "systems": strs,
			"write_budget": integer, "writes_used": integer, "budget_left": integer, "inflight_limit": integer, "rate_per_minute": integer,
			"expires_at": when, "created_at": when,
			"invocations":          withDesc(map[string]any{"type": "array", "items": ref("Invocation")}, "GET /tasks/{id} only"),
			"invocations_by_state": withDesc(map[string]any{"type": "object", "additionalProperties": integer}, "GET /tasks/{id} only")}),
		"ExpectedVersion": strict([]string{"expected_version"}, map[string]any{"expected_version": between(1, math.MaxInt32, "the task's version as you last read it")}),
		"Proposal": strict([]string{"action", "args"}, map[string]any{"action": required(maxActionNameLen), "system": limited(maxSystemNameLen),
			"args": limitedObject(maxArgsBytes), "summary": limited(maxSummaryLen, "your own one-line description; the quote wins when they disagree")}),
		"Invocation": invocationSchema(),
		"Receipt": obj([]string{"receipt", "kid", "claims"}, map[string]any{
			"receipt": typ("string", "compact JWS: base64url(header) . base64url(claims) . base64url(Ed25519 signature); header {alg: EdDSA, typ: countersign-receipt+jwt, kid}"),
			"kid":     typ("string", "the signing key's JWK thumbprint (RFC 7638)"),
			"claims": obj([]string{"sub", "iat", "task_id", "system", "action", "state", "target", "args", "result", "verification", "completed_at", "approvals", "args_digest"}, map[string]any{
				"iss": typ("string", "the console's address for links it sends (-public-url, else its listen address)"), "sub": typ("string", "the invocation's id"), "iat": typ("integer", "unix seconds"),
				"task_id": str, "system": str, "action": str, "state": enum("completed", "reversed"),
				"target": obj([]string{"system", "kind", "id", "display"}, map[string]any{"system": str, "kind": str, "id": str, "display": str}),
				"args":   withDesc(anyObj, "the arguments the system was sent"),
				"result": nullable(obj([]string{"reference", "short_reference"}, map[string]any{"reference": str, "short_reference": str, "deduplicated": boolean,
					"amount_cents": withDesc(integer, "the amount the system recorded, when its adapter reads it"), "currency": str})),
				"verification": nullable(obj([]string{"verified", "evidence", "at"}, map[string]any{"verified": boolean, "evidence": str, "at": when})),
				"completed_at": nullable(when),
				"approvals":    withDesc(map[string]any{"type": "array", "items": receiptApprovalSchema()}, "the staff's approvals of the arguments sent, oldest first"),
				"consent":      receiptConsentSchema(),
				"trail": withDesc(obj([]string{"checkpoint", "leaves"}, map[string]any{
					"checkpoint": typ("string", "the audit trail's signed checkpoint (C2SP signed note) the proofs lead to"),
					"leaves": map[string]any{"type": "array", "items": obj([]string{"index", "entry", "proof"}, map[string]any{
						"index": integer, "entry": typ("string", "the exact bytes hashed: SHA-256(0x00 || entry) is the leaf hash"),
						"proof": map[string]any{"type": "array", "items": typ("string", "base64 node hash")}})}}),
					"the audit trail's proof of this write (internal/audit/README.md): absent when the console has no audit key"),
				"args_digest": typ("string", "hex SHA-256 of the canonical arguments sent (keys sorted, no spaces, numbers as written)")})}),
		"JWKS": obj([]string{"keys"}, map[string]any{"keys": map[string]any{"type": "array", "items": obj([]string{"kty", "crv", "x", "kid", "alg"},
			map[string]any{"kty": enum("OKP"), "crv": enum("Ed25519"), "x": typ("string", "the public key, base64url"), "kid": str, "alg": enum("EdDSA"), "use": enum("sig")})}}),
		"ConversationEvent":         conversationEventSchema(intents, modes, false),
		"RecordedConversationEvent": conversationEventSchema(intents, modes, true),
		"Conversation": obj([]string{"conversation_id", "handoff"}, map[string]any{"conversation_id": str,
			"handoff": withDesc(nullable(ref("HandoffStatus")), "the latest hand-off; null when the conversation never handed off")}),
		"HandoffStatus": handoffStatusSchema(),
	}
}

// handoffStatusSchema is where a conversation's latest hand-off stands, in
// GET /conversations/{id} and the handoff.* webhooks' bodies.
func handoffStatusSchema() map[string]any {
	str, when := typ("string"), map[string]any{"type": "string", "format": "date-time"}
	return obj([]string{"id", "state", "handed_off_at", "taken_at", "closed_at", "by", "note"}, map[string]any{
		"id":            typ("integer", "the hand-off's conversation event id"),
		"state":         enum("waiting", "taken", "resolved", "given_back"),
		"handed_off_at": when, "taken_at": nullable(when), "closed_at": nullable(withDesc(when, "when it was resolved or given back")),
		"by":   withDesc(str, "the person who took it, or who resolved it or gave it back; empty while waiting"),
		"note": withDesc(str, "resolved or given_back: the person's note to the assistant (what they did, what to do next)"),
		"taken_over": withDesc(obj([]string{"from", "by", "at", "reason"}, map[string]any{
			"from": withDesc(str, "the person who held it"), "by": withDesc(str, "the manager who took it over"),
			"at": when, "reason": withDesc(str, "why the manager took it over")}),
			"present once a manager took the conversation over from the person holding it (by is then the manager)")})
}

// conversationEventSchema is the body of POST /conversations/{id}/events,
// or (recorded) what it answers: the event as stored.
func conversationEventSchema(intents, modes []string, recorded bool) map[string]any {
	str, when := typ("string"), map[string]any{"type": "string", "format": "date-time"}
	props := map[string]any{"task_id": limited(maxTaskIDLen), "intent": enum(intents...), "mode": enum(modes...),
		"summary": limited(maxSummaryLen, "required for handed_off: what the agent needs instead of the transcript"),
		"facts":   limitedObject(maxFactsBytes),
		"would_propose": strict([]string{"action"}, map[string]any{"action": required(maxActionNameLen),
			"args": limitedObject(maxArgsBytes)})}
	if recorded {
		props["id"], props["conversation_id"], props["assistant_id"], props["at"] = typ("integer"), str, str, when
		return obj([]string{"id", "conversation_id", "assistant_id", "intent", "mode", "at"}, props)
	}
	m := strict([]string{"intent", "mode"}, props)
	// A hand-off needs a summary that is more than spaces.
	m["if"] = map[string]any{"required": []string{"mode"}, "properties": map[string]any{"mode": map[string]any{"const": string(assistants.ModeHandedOff)}}}
	m["then"] = map[string]any{"required": []string{"summary"}, "properties": map[string]any{"summary": map[string]any{"pattern": `\S`}}}
	return m
}

// invocationSchema is an invocation as the API, MCP and outcome webhooks
// show it (invocationJSON).
func invocationSchema() map[string]any {
	str, integer, boolean, anyObj := typ("string"), typ("integer"), typ("boolean"), freeObject()
	strs := map[string]any{"type": "array", "items": str}
	when := map[string]any{"type": "string", "format": "date-time"}
	return obj([]string{"id", "task_id", "system", "action", "target", "state", "state_label", "version", "args", "quote", "summary", "summary_disagrees",
		"idempotency_key", "deduplicated", "next", "result", "error", "reason", "say", "created_at"}, map[string]any{"id": str, "task_id": str, "system": str, "action": str,
		"target": obj([]string{"system", "kind", "id", "display"}, map[string]any{"system": str, "kind": str, "id": str, "display": str}),
		"state": enum("proposed", "awaiting_confirmation", "awaiting_approval", "approved", "dispatching", "completed", "failed",
			"unverified", "not_dispatched", "rejected", "expired", "reversed"),
		"state_label": str, "version": integer,
		"args": obj([]string{"proposed", "approved", "effective"}, map[string]any{"proposed": anyObj,
			"approved":  nullable(withDesc(anyObj, "the arguments as approved (an agent may edit them); null until approved")),
			"effective": nullable(withDesc(anyObj, "the arguments sent to the system; null until sent"))}),
		"quote": obj([]string{"title", "lines", "consequences", "amount_cents", "effective_at", "target_version", "reversible"}, map[string]any{"title": str,
			"lines": map[string]any{"type": "array", "items": obj([]string{"label", "to"}, map[string]any{"label": str, "from": str, "to": str,
				"emphasis": boolean, "sum": boolean,
				"customer": withDesc(str, "the line as one sentence in the customer's words, when its label and values are the system's codes")})},
			"consequences": strs, "amount_cents": nullable(withDesc(integer, "null for a change that moves no money")), "currency": str,
			"effective_at": nullable(withDesc(when, "null when it takes effect at once")), "target_version": str, "reversible": boolean}),
		"summary": str, "summary_disagrees": boolean, "idempotency_key": str,
		"deduplicated": withDesc(boolean, "true when this answers a repeated request with the earlier invocation (status 200)"),
		"next": obj([]string{"kind", "url", "message"}, map[string]any{"kind": enum("confirm", "approval", "dispatch", "none"), "url": str, "message": str,
			"proofs": withDesc(strs, "kind confirm: how the customer may prove who they are (link, code, account, assertion, passkey)"),
			"elicitation": withDesc(enum("accepted", "declined", "cancelled", "sent"),
				"over MCP only, when the confirmation page went to the customer's client as a URL-mode elicitation instead of in url: "+
					"what the customer answered their client, or sent (the client was given it)")}),
		"result": nullable(withDesc(obj([]string{"reference", "short_reference"}, map[string]any{"reference": str,
			"short_reference": withDesc(str, "the reference the customer's page shows (\"#75CDDA\"); say uses it"),
			"deduplicated":    withDesc(boolean, "the system had already made this change (its own idempotency)"),
			"amount_cents":    withDesc(integer, "the amount the system itself recorded for the change (a refund it paid), when its adapter reads it; may differ from the quote's"),
			"currency":        withDesc(str, "the currency of amount_cents")}),
			"the change's result once done; null before")),
		"error": nullable(withDesc(obj([]string{"code", "message", "retryable"}, map[string]any{"code": str, "message": str, "retryable": boolean, "hint": str, "outcome": str}),
			"the structured error of a failed or unverified call; null otherwise, and once the outcome is known to be completed (or reversed)")),
		"reason": nullable(withDesc(obj([]string{"code", "message"}, map[string]any{
			"code": withDesc(str, "not dispatched: task_paused, task_cancelled, task_closed, task_expired, budget_spent, global_stop, "+
				"policy_disabled, route_changed, target_changed, system_unreachable, system_not_connected, currency_not_limited, mixed_currency_exposure; rejected: rejected_by_agent, "+
				"declined_by_customer, superseded; expired: approval_expired, confirmation_expired"),
			"message": withDesc(str, "the reason in a sentence; for a rejection, the words of the person who rejected it")}),
			"why it was not dispatched, rejected, declined or expired; null in every other state")),
		"verification": obj([]string{"verified", "evidence", "at"}, map[string]any{"verified": boolean, "evidence": str, "at": when}),
		"say":          typ("string", "the sentence you may tell the customer now"), "route_reason": str, "deadline_at": when, "created_at": when,
		"reconciliation": withDesc(obj([]string{"conclusive", "found"}, map[string]any{"conclusive": boolean, "found": boolean}),
			"POST /invocations/{id}/reconcile only"),
		"receipt_url": map[string]any{"type": "string", "format": "uri", "description": "completed or reversed: where its signed receipt is (GET /invocations/{id}/receipt)"}})
}
