package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"countersign/web/webtest"
)

// TestEveryJSONBodyRefusesDuplicateKeys sends each route of the API and
// the MCP server that takes a body one that names a key twice, at the top
// or deep inside: each is a 400 naming the key by its path, before the
// handler sees it (the proposal below would otherwise be recorded with the
// last amount while a gateway read the first). The same bodies with each
// key once are served. A POST route of the assistant's side missing from
// the table fails the test, so a new one cannot go untested.
func TestEveryJSONBodyRefusesDuplicateKeys(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	inv := b.ProposeRefund(t, order)
	task := "/api/v1/tasks/" + b.TaskID()
	mcpCall := func(params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + params + `}`
	}
	cases := []struct {
		route, path string
		// body has %s where the duplicate goes; once is what fills it in
		// the body that works, twice in the refused one.
		body, once, twice string
		field             string
		served            int // the status of the body with each key once; 0: any but a 400 or 5xx
	}{
		{"/api/v1/tasks", "/api/v1/tasks",
			`{"customer_ref":"customer@demo.countersign.test","allowed_actions":["issue_refund"]%s}`,
			`,"conversation_id":"conv-dup"`, `,"conversation_id":"conv-dup","conversation_id":"conv-other"`, "conversation_id", http.StatusCreated},
		{"/api/v1/tools/:name", "/api/v1/tools/list_orders",
			`{"task":"` + b.TaskID() + `","args":{"status":"delivered"%s}}`,
			``, `,"status":"pending"`, "args.status", http.StatusOK},
		{"/api/v1/tasks/:id/invocations", task + "/invocations",
			`{"action":"issue_refund","system":"shop","args":{"order_id":"` + order + `","reason_code":"damaged","amount_cents":300%s}}`,
			``, `,"amount_cents":99999`, "args.amount_cents", http.StatusCreated},
		{"/api/v1/conversations/:id/events", "/api/v1/conversations/conv-1/events",
			`{"intent":"ambiguous","mode":"answered","task_id":"` + b.TaskID() + `","facts":{"order":{"items":["lamp"]%s}}}`,
			``, `,"items":["desk"]`, "facts.order.items", http.StatusCreated},
		{"/mcp", "/mcp?task=" + b.TaskID(), mcpCall(`{"name":"list_orders","arguments":{"status":"delivered"%s}}`),
			``, `,"status":"pending"`, "params.arguments.status", http.StatusOK},
		// Last: these change the task the others use.
		{"/api/v1/tasks/:id/pause", task + "/pause", `{"expected_version":1%s}`, ``, `,"expected_version":2`, "expected_version", 0},
		{"/api/v1/tasks/:id/resume", task + "/resume", `{"expected_version":1%s}`, ``, `,"expected_version":2`, "expected_version", 0},
		{"/api/v1/tasks/:id/cancel", task + "/cancel", `{"expected_version":1%s}`, ``, `,"expected_version":2`, "expected_version", 0},
		{"/api/v1/invocations/:id/reconcile", "/api/v1/invocations/" + inv + "/reconcile", `{"note":{"a":1%s}}`, ``, `,"a":2`, "note.a", 0},
		{"/api/v1/invocations/:id/reverse", "/api/v1/invocations/" + inv + "/reverse", `{"note":[{"a":1%s}]}`, ``, `,"a":2`, "note[0].a", 0},
	}
	// encoding/json fills a field from a key in any case, so these say
	// two things too: the SDK would call another tool than a gateway read.
	mcpCases := []struct{ body, field string }{
		{mcpCall(`{"name":"list_orders","Name":"propose_issue_refund","arguments":{}}`), "params.Name"},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/list","Method":"tools/call","params":{"name":"list_orders"}}`, "Method"},
		{`{"jsonrpc":"2.0","id":8,"id":9,"method":"tools/list"}`, "id"},
	}

	tested := map[string]bool{}
	for _, c := range cases {
		tested[c.route] = true
	}
	for _, r := range b.Web.Echo().Routes() {
		if r.Method == http.MethodPost && (strings.HasPrefix(r.Path, "/api/") || r.Path == "/mcp") && !tested[r.Path] {
			t.Errorf("POST %s takes a body and has no case here", r.Path)
		}
	}

	mcpHeaders := []string{"Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-06-18"}
	refused := func(t *testing.T, res webtest.APIResponse, field string, mcp bool) {
		t.Helper()
		body := res.JSON
		if mcp {
			if rpcError(res) == 0 {
				t.Fatalf("%d %.300s, want a JSON-RPC error", res.Status, res.Body)
			}
			body, _ = res.JSON["error"].(map[string]any)["data"].(map[string]any)
		}
		fields, _ := body["fields"].(map[string]any)
		if said, _ := fields[field].(string); res.Status != http.StatusBadRequest || body["code"] != "json_duplicate_key" || said == "" {
			t.Fatalf("%d %.300s, want 400 json_duplicate_key naming %s", res.Status, res.Body, field)
		}
	}
	for _, c := range cases {
		t.Run(c.route, func(t *testing.T) {
			mcp := c.route == "/mcp"
			headers := []string{}
			if mcp {
				headers = mcpHeaders
			}
			res := b.Call(t, b.Key, http.MethodPost, c.path, fmt.Sprintf(c.body, c.twice), headers...)
			refused(t, res, c.field, mcp)

			res = b.Call(t, b.Key, http.MethodPost, c.path, fmt.Sprintf(c.body, c.once), headers...)
			switch {
			case c.served != 0 && res.Status != c.served, res.Status >= 500, res.JSON["code"] == "json_duplicate_key",
				mcp && rpcError(res) != 0:
				t.Fatalf("with each key once: %d %.300s, want it served", res.Status, res.Body)
			}
		})
	}
	for _, c := range mcpCases {
		t.Run("mcp "+c.field, func(t *testing.T) {
			refused(t, b.Call(t, b.Key, http.MethodPost, "/mcp?task="+b.TaskID(), c.body, mcpHeaders...), c.field, true)
		})
	}
}
