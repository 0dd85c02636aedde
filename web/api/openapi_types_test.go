package api_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/web/webtest"
)

// TestOpenAPIHasNoBareObjects walks the document and refuses an object
// schema that says neither its members (properties) nor that any are
// allowed (additionalProperties): openapi-typescript makes such a bare
// {"type":"object"} a Record<string, never>, an object that may have no
// member, so a typed client could send no proposal's arguments and read no
// tool's input schema.
func TestOpenAPIHasNoBareObjects(t *testing.T) {
	t.Parallel()
	b := webtest.New(t)
	doc := b.Call(t, "", http.MethodGet, "/api/v1/openapi.json", nil).Want(t, http.StatusOK).JSON
	bare := bareObjects(doc, "")
	for _, ptr := range bare {
		t.Errorf("%s is a bare object: give its properties, or additionalProperties: true when its members are free", ptr)
	}
}

// bareObjects lists the JSON pointers of the bare object schemas in v.
func bareObjects(v any, ptr string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if isObject(v["type"]) && v["properties"] == nil && v["additionalProperties"] == nil && v["patternProperties"] == nil &&
			v["$ref"] == nil && v["anyOf"] == nil && v["oneOf"] == nil && v["allOf"] == nil {
			out = append(out, ptr)
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range v {
				if !yield(k) {
					return
				}
			}
		}) {
			out = append(out, bareObjects(v[k], ptr+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))...)
		}
	case []any:
		for i, e := range v {
			out = append(out, bareObjects(e, ptr+"/"+strconv.Itoa(i))...)
		}
	}
	return out
}

func isObject(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

func TestBareObjectsAreFound(t *testing.T) {
	t.Parallel()
	doc := map[string]any{"a": map[string]any{"type": "object"}, "b": map[string]any{"type": []any{"object", "null"}},
		"c": map[string]any{"type": "object", "additionalProperties": true}, "d": map[string]any{"type": "object", "properties": map[string]any{}}}
	if got := bareObjects(doc, ""); !slices.Equal(got, []string{"/a", "/b"}) {
		t.Errorf("bare objects %v, want /a and /b", got)
	}
}

// TestEveryDocumentedAnswerIsServedAsDocumented sends a request for every
// success answer the document gives (each operation's 2xx, a replay's 200
// among them) against the console over real PostgreSQL and the demo shop.
// The test stack checks every answer against its schema with each object
// closed (webtest's contract: a member the schema does not list fails, as
// a typed client generated from the document would not know it); this
// test makes sure no documented answer goes unchecked.
func TestEveryDocumentedAnswerIsServedAsDocumented(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	seen := map[string]bool{}
	call := func(method, path string, body any, status int) webtest.APIResponse {
		t.Helper()
		res := b.Call(t, b.Key, method, path, body).Want(t, status)
		seen[method+" "+template(path)+" "+strconv.Itoa(status)] = true
		return res
	}
	task := b.TaskID()
	call(http.MethodGet, "/api/v1/openapi.json", nil, http.StatusOK)
	call(http.MethodGet, "/api/v1/receipts/jwks.json", nil, http.StatusOK)
	call(http.MethodGet, "/api/v1/tools?task="+task, nil, http.StatusOK)
	subs := call(http.MethodPost, "/api/v1/tools/list_subscriptions", map[string]any{"task": task}, http.StatusOK)
	call(http.MethodGet, "/api/v1/tasks/"+task, nil, http.StatusOK)

	other := call(http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": webtest.Jordan, "conversation_id": "conv-answers",
		"allowed_actions": []string{"issue_refund"}}, http.StatusCreated).JSON
	otherPath := "/api/v1/tasks/" + other["id"].(string)
	v := int(other["version"].(float64))
	call(http.MethodPost, otherPath+"/pause", map[string]any{"expected_version": v}, http.StatusOK)
	call(http.MethodPost, otherPath+"/resume", map[string]any{"expected_version": v + 1}, http.StatusOK)
	call(http.MethodPost, otherPath+"/cancel", map[string]any{"expected_version": v + 2}, http.StatusOK)

	var pro string
	for _, s := range subs.JSON["data"].([]any) {
		if m := s.(map[string]any); m["plan"] == "Pro" {
			pro = m["subscription_id"].(string)
		}
	}
	proposal := map[string]any{"action": "cancel_subscription",
		"args":    map[string]any{"subscription_id": pro, "reason_code": "too_expensive", "effective": "end_of_period"},
		"summary": "Cancel the Pro plan at the end of the period"}
	inv := call(http.MethodPost, "/api/v1/tasks/"+task+"/invocations", proposal, http.StatusCreated)
	call(http.MethodPost, "/api/v1/tasks/"+task+"/invocations", proposal, http.StatusOK)
	id := inv.JSON["id"].(string)
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: b.Users[accounts.Agent].Actor(), InvocationID: id,
		Verb: controlplane.StaffApprove, Version: int32(inv.JSON["version"].(float64)), ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	call(http.MethodGet, "/api/v1/invocations/"+id+"?wait=1s", nil, http.StatusOK)
	call(http.MethodGet, "/api/v1/invocations/"+id+"/receipt", nil, http.StatusOK)
	call(http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil, http.StatusCreated)
	call(http.MethodPost, "/api/v1/invocations/"+id+"/reverse", nil, http.StatusOK)

	lost := b.ProposeRefund(t, b.DamagedOrder(t))
	webtest.MarkUnverified(t, b, lost)
	call(http.MethodPost, "/api/v1/invocations/"+lost+"/reconcile", nil, http.StatusOK)

	call(http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"task_id": task, "intent": "transactional_high",
		"mode": "handed_off", "summary": "The customer wants a person.", "facts": map[string]any{"order": "any value"}}, http.StatusCreated)
	call(http.MethodGet, "/api/v1/conversations/conv-1", nil, http.StatusOK)

	doc := b.Call(t, "", http.MethodGet, "/api/v1/openapi.json", nil).JSON
	for p, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			for code := range op.(map[string]any)["responses"].(map[string]any) {
				key := fmt.Sprintf("%s %s %s", strings.ToUpper(method), p, code)
				if code[0] == '2' && !seen[key] {
					t.Errorf("%s: documented, never answered here; add a request for it", key)
				}
			}
		}
	}
}

// idSegment is a path segment that is an object's id.
var idSegment = regexp.MustCompile(`^(tsk|inv|conv)[-_][0-9a-z-]+$`)

// template is the document's path of a request's path: ids become {id}.
func template(path string) string {
	path, _, _ = strings.Cut(strings.TrimPrefix(path, "/api/v1"), "?")
	segs := strings.Split(path, "/")
	for i, s := range segs {
		switch {
		case i == 2 && segs[1] == "tools":
			segs[i] = "{name}"
		case idSegment.MatchString(s):
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}
