package journeys_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"
)

// contractRequest is a request to one documented operation: the values of
// its path parameters, its query, headers and body.
type contractRequest struct {
	params map[string]string
	query  map[string]string
	header map[string]string
	body   map[string]any
}

func (r contractRequest) clone() contractRequest {
	out := contractRequest{params: map[string]string{}, query: map[string]string{}, header: map[string]string{}}
	for k, v := range r.params {
		out.params[k] = v
	}
	for k, v := range r.query {
		out.query[k] = v
	}
	for k, v := range r.header {
		out.header[k] = v
	}
	if r.body != nil {
		raw, _ := json.Marshal(r.body)
		_ = json.Unmarshal(raw, &out.body)
	}
	return out
}

// violation is one documented constraint broken in a request.
type violation struct {
	what  string
	apply func(*contractRequest)
}

// TestAPIRefusesWhatTheDocumentForbids breaks, one at a time, every
// constraint the OpenAPI document puts on a request — a field it does not
// list (additionalProperties: false), a required field left out, a wrong
// type, enum or format, minLength, maxLength, pattern, minimum, maximum,
// minItems, maxItems, maxProperties, if/then, a parameter's maxLength — in
// a request that is otherwise valid, and wants 400 or 422 for each; then
// sends the valid request and wants it to succeed. A constraint the server
// does not enforce fails here; the answers are checked against the document
// too (checkContract).
func TestAPIRefusesWhatTheDocumentForbids(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	doc := b.Call(t, "", http.MethodGet, "/api/v1/openapi.json", nil).Want(t, http.StatusOK).JSON
	order := b.DamagedOrder(t)
	task := b.TaskID()
	states := b.NewTask(t, b.Key, "conv-states", []string{"issue_refund"})
	inv := b.ProposeRefund(t, order)
	// Valid requests, in the order their valid form is sent (pause, then
	// resume, then cancel of one task).
	valid := []struct {
		op  string
		req contractRequest
	}{
		{"GET /tools", contractRequest{query: map[string]string{"task": task, "q": "refund"}}},
		{"POST /tools/{name}", contractRequest{params: map[string]string{"name": "list_orders"},
			body: map[string]any{"task": task, "system": "shop", "args": map[string]any{}}}},
		{"POST /tasks", contractRequest{body: map[string]any{"customer_ref": "customer@demo.countersign.test", "conversation_id": "conv-contract",
			"allowed_actions": []string{"issue_refund"}, "systems": []string{"shop"}, "write_budget": 5, "inflight_limit": 2, "rate_per_minute": 10,
			"expires_at": b.Clock.Now().Add(2 * time.Hour).Format(time.RFC3339)}}},
		{"GET /tasks/{id}", contractRequest{params: map[string]string{"id": task}}},
		{"POST /tasks/{id}/invocations", contractRequest{params: map[string]string{"id": task}, header: map[string]string{"Idempotency-Key": "contract-1"},
			body: map[string]any{"action": "issue_refund", "system": "shop", "args": webtest.RefundArgs(order, 300), "summary": "Refund $3.00"}}},
		{"GET /invocations/{id}", contractRequest{params: map[string]string{"id": inv}}},
		{"POST /invocations/{id}/reconcile", contractRequest{params: map[string]string{"id": inv}}},
		{"POST /invocations/{id}/reverse", contractRequest{params: map[string]string{"id": inv}}},
		{"GET /invocations/{id}/receipt", contractRequest{params: map[string]string{"id": inv}}},
		{"POST /conversations/{id}/events", contractRequest{params: map[string]string{"id": "conv-1"},
			body: map[string]any{"intent": "transactional_high", "mode": "handed_off", "task_id": task, "summary": "Wants more than the limit.",
				"facts": map[string]any{"order_id": order}, "would_propose": map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 90000)}}}},
		{"GET /conversations/{id}", contractRequest{params: map[string]string{"id": "conv-1"}}},
		{"POST /tasks/{id}/pause", contractRequest{params: map[string]string{"id": states["id"].(string)}, body: map[string]any{"expected_version": 1}}},
		{"POST /tasks/{id}/resume", contractRequest{params: map[string]string{"id": states["id"].(string)}, body: map[string]any{"expected_version": 2}}},
		{"POST /tasks/{id}/cancel", contractRequest{params: map[string]string{"id": states["id"].(string)}, body: map[string]any{"expected_version": 3}}},
	}
	ops := map[string]map[string]any{}
	for p, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			ops[strings.ToUpper(method)+" "+p] = op.(map[string]any)
		}
	}
	tested := map[string]bool{}
	n := 0
	for _, v := range valid {
		op, ok := ops[v.op]
		if !ok {
			t.Fatalf("%s is not in the document", v.op)
		}
		tested[v.op] = true
		method, path, _ := strings.Cut(v.op, " ")
		for _, bad := range requestViolations(doc, op) {
			n++
			req := v.req.clone()
			bad.apply(&req)
			res := sendContract(t, b, method, path, req)
			if res.Status != http.StatusBadRequest && res.Status != http.StatusUnprocessableEntity {
				t.Errorf("%s with %s: %d, want 400 or 422\n%.400s", v.op, bad.what, res.Status, res.Body)
			}
		}
		if op["requestBody"] != nil {
			if res := sendContract(t, b, method, path, v.req.clone()); res.Status/100 != 2 {
				t.Errorf("%s, valid: %d, want 2xx\n%.400s", v.op, res.Status, res.Body)
			}
		}
	}
	t.Logf("%d violations of the document's constraints sent", n)
	for key, op := range ops {
		if !tested[key] && (op["requestBody"] != nil || op["parameters"] != nil) {
			t.Errorf("%s takes a body or parameters: give it a valid request here so its constraints are exercised", key)
		}
	}
}

// sendContract sends req to the operation at the templated path.
func sendContract(t *testing.T, b *webtest.Stack, method, path string, req contractRequest) webtest.APIResponse {
	t.Helper()
	for name, v := range req.params {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	if len(req.query) > 0 {
		q := url.Values{}
		for k, v := range req.query {
			q.Set(k, v)
		}
		path += "?" + q.Encode()
	}
	var headers []string
	for k, v := range req.header {
		headers = append(headers, k, v)
	}
	// The key's rate limit (120 a minute) refills while the test clock runs.
	b.Clock.Advance(time.Second)
	var body any
	if req.body != nil {
		body = req.body
	}
	return b.Call(t, b.Key, method, "/api/v1"+path, body, headers...)
}

// requestViolations lists a violation of each constraint the document puts
// on an operation's parameters and body.
func requestViolations(doc map[string]any, op map[string]any) []violation {
	var out []violation
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		p := p.(map[string]any)
		name, in := p["name"].(string), p["in"].(string)
		for _, bad := range badValues(p["schema"].(map[string]any)) {
			s, ok := bad.v.(string)
			if !ok {
				continue // parameters are strings on the wire
			}
			out = append(out, violation{what: fmt.Sprintf("%s parameter %s %s", in, name, bad.what), apply: func(r *contractRequest) {
				switch in {
				case "path":
					r.params[name] = s
				case "query":
					r.query[name] = s
				case "header":
					r.header[name] = s
				}
			}})
		}
	}
	if rb, ok := op["requestBody"].(map[string]any); ok {
		schema := rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		out = append(out, bodyViolations(doc, schema, nil)...)
	}
	return out
}

// bodyViolations walks an object schema at path (of property names) in the
// body.
func bodyViolations(doc, s map[string]any, path []string) []violation {
	s = resolveSchema(doc, s)
	var out []violation
	at := strings.Join(path, ".")
	if at == "" {
		at = "the body"
	}
	if s["additionalProperties"] == false {
		out = append(out, violation{what: at + " with a field it does not list", apply: func(r *contractRequest) {
			setAt(r.body, append(slices.Clone(path), "not_a_field"), true)
		}})
	}
	req, _ := s["required"].([]any)
	for _, name := range req {
		out = append(out, violation{what: at + " without " + name.(string), apply: func(r *contractRequest) {
			deleteAt(r.body, append(slices.Clone(path), name.(string)))
		}})
	}
	if ifs, ok := s["if"].(map[string]any); ok {
		then := s["then"].(map[string]any)
		set := func(r *contractRequest) {
			for name, ps := range ifs["properties"].(map[string]any) {
				setAt(r.body, append(slices.Clone(path), name), ps.(map[string]any)["const"])
			}
		}
		for _, name := range then["required"].([]any) {
			out = append(out, violation{what: fmt.Sprintf("%s matching %v without %s", at, ifs["properties"], name), apply: func(r *contractRequest) {
				set(r)
				deleteAt(r.body, append(slices.Clone(path), name.(string)))
			}})
		}
		thenProps, _ := then["properties"].(map[string]any)
		for name, ps := range thenProps {
			for _, bad := range badValues(ps.(map[string]any)) {
				out = append(out, violation{what: fmt.Sprintf("%s matching %v with %s %s", at, ifs["properties"], name, bad.what), apply: func(r *contractRequest) {
					set(r)
					setAt(r.body, append(slices.Clone(path), name), bad.v)
				}})
			}
		}
	}
	props, _ := s["properties"].(map[string]any)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	}) {
		ps := resolveSchema(doc, props[name].(map[string]any))
		field := append(slices.Clone(path), name)
		for _, bad := range badValues(ps) {
			out = append(out, violation{what: strings.Join(field, ".") + " " + bad.what, apply: func(r *contractRequest) { setAt(r.body, field, bad.v) }})
		}
		if ps["properties"] != nil {
			out = append(out, bodyViolations(doc, ps, field)...)
		}
		if items, ok := ps["items"].(map[string]any); ok {
			for _, bad := range badValues(items) {
				out = append(out, violation{what: strings.Join(field, ".") + " with an item " + bad.what,
					apply: func(r *contractRequest) { setAt(r.body, field, []any{bad.v}) }})
			}
		}
	}
	return out
}

// badValue is a value that breaks one keyword of a schema.
type badValue struct {
	what string
	v    any
}

// badValues lists, for each constraint keyword of a (non-object-walking)
// schema, a value that breaks it and no other.
func badValues(s map[string]any) []badValue {
	var out []badValue
	num := func(k string) (int, bool) {
		f, ok := s[k].(float64)
		return int(f), ok
	}
	switch s["type"] {
	case "string":
		out = append(out, badValue{"as a number", 12345})
	case "integer":
		out = append(out, badValue{"as a string", "three"}, badValue{"as a fraction", 1.5})
	case "boolean":
		out = append(out, badValue{"as a string", "yes"})
	case "array":
		out = append(out, badValue{"as a string", "x"})
	case "object":
		out = append(out, badValue{"as a string", "x"})
	}
	if n, ok := num("maxLength"); ok {
		out = append(out, badValue{fmt.Sprintf("of %d characters (maxLength %d)", n+1, n), strings.Repeat("a", n+1)})
	}
	if n, ok := num("minLength"); ok && n > 0 {
		out = append(out, badValue{fmt.Sprintf("of %d characters (minLength %d)", n-1, n), strings.Repeat("a", n-1)})
	}
	if s["pattern"] == `\S` {
		out = append(out, badValue{"of spaces only (pattern \\S)", "   "})
	} else if s["pattern"] != nil {
		panic(fmt.Sprintf("no bad value known for pattern %v", s["pattern"]))
	}
	if e, ok := s["enum"].([]any); ok {
		out = append(out, badValue{fmt.Sprintf("not one of %v", e), "not_one_of_them"})
	}
	if s["format"] == "date-time" {
		out = append(out, badValue{"not a date-time", "tomorrow"})
	}
	if n, ok := num("minimum"); ok {
		out = append(out, badValue{fmt.Sprintf("%d (minimum %d)", n-1, n), n - 1})
	}
	if n, ok := num("maximum"); ok {
		out = append(out, badValue{fmt.Sprintf("%d (maximum %d)", n+1, n), n + 1})
	}
	if n, ok := num("minItems"); ok && n > 0 {
		out = append(out, badValue{fmt.Sprintf("with %d items (minItems %d)", n-1, n), make([]any, 0, n-1)})
	}
	if n, ok := num("maxItems"); ok {
		items := make([]any, n+1)
		for i := range items {
			items[i] = fmt.Sprintf("x%d", i)
		}
		out = append(out, badValue{fmt.Sprintf("with %d items (maxItems %d)", n+1, n), items})
	}
	if n, ok := num("maxProperties"); ok {
		m := map[string]any{}
		for i := range n + 1 {
			m[fmt.Sprintf("k%d", i)] = i
		}
		out = append(out, badValue{fmt.Sprintf("with %d members (maxProperties %d)", n+1, n), m})
	}
	return out
}

func resolveSchema(doc, s map[string]any) map[string]any {
	ref, ok := s["$ref"].(string)
	if !ok {
		return s
	}
	name := strings.TrimPrefix(ref, "#/components/schemas/")
	return doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
}

// setAt sets the member at path of body, making the objects on the way.
func setAt(body map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := body[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			body[k] = next
		}
		body = next
	}
	body[path[len(path)-1]] = v
}

func deleteAt(body map[string]any, path []string) {
	for _, k := range path[:len(path)-1] {
		next, ok := body[k].(map[string]any)
		if !ok {
			return
		}
		body = next
	}
	delete(body, path[len(path)-1])
}
