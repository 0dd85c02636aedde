package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"countersign/web/webtest"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearerTransport adds an API key to every request of the MCP client.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

func mcpSession(t *testing.T, b *webtest.Stack, key, task string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-assistant", Version: "1"}, nil)
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: b.Server.URL + "/mcp?task=" + task,
		HTTPClient: &http.Client{Transport: bearerTransport{key: key}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
}

// callTool calls an MCP tool and decodes its structured content into a
// map, failing on an error result.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError {
		t.Fatalf("tool error: %s", raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return out
}

func TestMCPSessionMatchesTheAPI(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	cs, err := mcpSession(t, b, b.Key, b.TaskID())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	// The same catalog as GET /api/v1/tools?task=, with propose_ for writes.
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range listed.Tools {
		got = append(got, tool.Name)
		if strings.HasPrefix(tool.Name, "propose_") && !strings.Contains(tool.Description, "dry-run") {
			t.Errorf("%s does not tell the model it is a dry-run: %q", tool.Name, tool.Description)
		}
	}
	want := []string{"get_invocation", "pause_task", "wait_for_outcome"}
	for name, mode := range webtest.ToolModes(t, b.Call(t, b.Key, http.MethodGet, "/api/v1/tools?task="+b.TaskID(), nil)) {
		if mode == "read" {
			want = append(want, name)
		} else {
			want = append(want, "propose_"+name)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("MCP tools differ from the API catalog (-api +mcp):\n%s", diff)
	}

	// A read tool answers as POST /api/v1/tools/{name}.
	viaMCP := callTool(t, cs, "list_orders", map[string]any{})
	viaAPI := b.Call(t, b.Key, http.MethodPost, "/api/v1/tools/list_orders", map[string]any{"task": b.TaskID(), "args": map[string]any{}}).Want(t, http.StatusOK)
	if diff := cmp.Diff(viaAPI.JSON, viaMCP); diff != "" {
		t.Errorf("list_orders over MCP differs from the API (-api +mcp):\n%s", diff)
	}

	// A proposal answers as GET /api/v1/invocations/{id}.
	order := b.DamagedOrder(t)
	inv := callTool(t, cs, "propose_issue_refund", map[string]any{
		"order_id": order, "amount_cents": 1500, "reason_code": "damaged", "summary": "Refund $15.00 for the damaged lamp", "idempotency_key": "mcp-1"})
	if inv["state"] != "awaiting_approval" || inv["next"].(map[string]any)["kind"] != "approval" || inv["say"] == "" {
		t.Fatalf("proposal over MCP: %v", inv)
	}
	api := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+inv["id"].(string), nil).Want(t, http.StatusOK)
	if diff := cmp.Diff(api.JSON, inv); diff != "" {
		t.Errorf("invocation over MCP differs from the API (-api +mcp):\n%s", diff)
	}
	// The API replays the MCP call's Idempotency-Key: one path, one invocation.
	replay := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"action": "issue_refund",
		"args": webtest.RefundArgs(order, 1500), "summary": "Refund $15.00 for the damaged lamp"}, "Idempotency-Key", "mcp-1").Want(t, http.StatusOK)
	if replay.JSON["id"] != inv["id"] {
		t.Errorf("API replay of the MCP key made another invocation")
	}
	got2 := callTool(t, cs, "get_invocation", map[string]any{"invocation_id": inv["id"]})
	if got2["id"] != inv["id"] {
		t.Errorf("get_invocation: %v", got2)
	}

	// Refusals come back as tool errors with the API's error shape.
	bad, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "propose_issue_refund", Arguments: map[string]any{
		"order_id": order, "amount_cents": 100, "reason_code": "whim"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(bad.StructuredContent)
	if !bad.IsError || !strings.Contains(string(raw), `"reason_code"`) || !strings.Contains(string(raw), `"code":"invalid_arguments"`) {
		t.Errorf("bad enum over MCP: error=%v %s", bad.IsError, raw)
	}

	// Guidance as a resource and a prompt.
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "countersign://guidance/shop/issue_refund"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "refund") {
		t.Errorf("guidance resource: %v %+v", err, res)
	}
	prompt, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "guidance_issue_refund"})
	if err != nil || len(prompt.Messages) != 1 {
		t.Errorf("guidance prompt: %v %+v", err, prompt)
	}

	// pause_task pauses the task, as POST /tasks/{id}/pause does.
	paused := callTool(t, cs, "pause_task", map[string]any{})
	if paused["state"] != "paused" {
		t.Errorf("pause_task: %v", paused)
	}
	task := b.Call(t, b.Key, http.MethodGet, "/api/v1/tasks/"+b.TaskID(), nil).Want(t, http.StatusOK)
	if task.JSON["state"] != "paused" {
		t.Errorf("task after pause_task: %v", task.JSON["state"])
	}
}

func TestMCPRequiresAKeyAndOwnTask(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	if _, err := mcpSession(t, b, "csk_live_nope", b.TaskID()); err == nil {
		t.Errorf("an unknown key connected")
	}
	_, otherKey := b.NewAssistant(t, "other-bot")
	if _, err := mcpSession(t, b, otherKey, b.TaskID()); err == nil {
		t.Errorf("another assistant connected to this task")
	}
	// A task in the URL that is not the caller's is a JSON-RPC error, which
	// MCP clients can show, not a bare HTTP body.
	res := b.Call(t, otherKey, http.MethodPost, "/mcp?task="+b.TaskID(), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`).Want(t, http.StatusNotFound)
	if e, _ := res.JSON["error"].(map[string]any); res.JSON["jsonrpc"] != "2.0" || e["code"] != float64(-32602) {
		t.Errorf("another assistant's task: %s, want a JSON-RPC error", res.Body)
	}
	b.Call(t, "", http.MethodPost, "/mcp?task="+b.TaskID(), `{}`).Want(t, http.StatusUnauthorized)
}
