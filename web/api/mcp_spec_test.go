package api_test

import (
	"bytes"
	"context"
	"encoding/json"

	"countersign/web/webtest"

	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// mcpPost sends one raw JSON-RPC message to /mcp as a stock client would,
// with the request's Host set to host when it is not empty.
func mcpPost(t *testing.T, b *webtest.Stack, path, host, body string, headers ...string) webtest.APIResponse {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.Server.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+b.Key)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := webtest.APIResponse{Status: res.StatusCode, Header: res.Header, Body: string(raw)}
	_ = json.Unmarshal(raw, &out.JSON)
	return out
}

// rpcError is the JSON-RPC error code of an answer, or 0.
func rpcError(r webtest.APIResponse) float64 {
	e, _ := r.JSON["error"].(map[string]any)
	code, _ := e["code"].(float64)
	if r.JSON["jsonrpc"] != "2.0" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return 0
	}
	return code
}

// TestMCPTransportAsTheSpecSays: a browser page of another origin, or of a
// name that may have been rebound to this console, is refused with 403;
// clients outside a browser (no Origin) and the console's own address by IP
// are served. An unsupported MCP-Protocol-Version is a 400 and an unknown
// method a JSON-RPC -32601, both in JSON.
func TestMCPTransportAsTheSpecSays(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	path := "/mcp?task=" + b.TaskID()
	v := "MCP-Protocol-Version"
	if res := mcpPost(t, b, path, "", list, v, "2025-11-25"); res.Status != http.StatusOK || res.JSON["result"] == nil {
		t.Fatalf("without Origin: %d %s", res.Status, res.Body)
	}
	if res := mcpPost(t, b, path, "", list, v, "2025-11-25"); res.JSON["result"].(map[string]any)["cacheScope"] == "public" {
		t.Errorf("the assistant's own tool list may be cached for anyone: %s", res.Body)
	}
	if res := mcpPost(t, b, path, "", list, v, "2025-11-25", "Origin", b.Server.URL); res.Status != http.StatusOK {
		t.Errorf("a page of the console's own address: %d %s", res.Status, res.Body)
	}
	host := strings.TrimPrefix(b.Server.URL, "http://")
	port := host[strings.LastIndex(host, ":"):]
	for _, c := range []struct{ origin, host string }{
		{"https://evil.example", ""},
		{"null", ""},
		// A DNS-rebinding page: same origin by name, the name now resolving here.
		{"http://rebind.example" + port, "rebind.example" + port},
	} {
		res := mcpPost(t, b, path, c.host, list, v, "2025-11-25", "Origin", c.origin)
		if res.Status != http.StatusForbidden || rpcError(res) != -32600 {
			t.Errorf("Origin %s (Host %q): %d %s, want 403 with a JSON-RPC error", c.origin, c.host, res.Status, res.Body)
		}
	}

	for _, bad := range []string{"1999-01-01", "2099-01-01", "banana"} {
		res := mcpPost(t, b, path, "", list, v, bad)
		if res.Status != http.StatusBadRequest || rpcError(res) != float64(mcp.CodeUnsupportedProtocolVersion) {
			t.Errorf("MCP-Protocol-Version %s: %d %s, want 400 with a JSON-RPC error", bad, res.Status, res.Body)
		}
	}

	res := mcpPost(t, b, path, "", `{"jsonrpc":"2.0","id":7,"method":"nothing/here"}`, v, "2025-11-25")
	if res.Status != http.StatusOK || rpcError(res) != -32601 || res.JSON["id"] != float64(7) {
		t.Errorf("an unknown method: %d %s, want a JSON-RPC -32601 for id 7", res.Status, res.Body)
	}
	if res := mcpPost(t, b, path, "", `{"jsonrpc":"2.0","method":"notifications/nothing"}`, v, "2025-11-25"); res.Status != http.StatusAccepted {
		t.Errorf("an unknown notification: %d %s, want 202 (ignored)", res.Status, res.Body)
	}
}

// TestMCPToolsDescribeThemselves: every tool says whether it reads, whether
// it may destroy (no proposal does: nothing changes until a person says
// yes) and whether it reaches outside Countersign, and declares an output
// schema that each of its results, errors included, validates against.
// open_task requires allowed_actions. The server advertises neither
// logging nor listChanged, which it never sends.
func TestMCPToolsDescribeThemselves(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	cs, err := mcpSession(t, b, b.Key, b.TaskID())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	open, err := openMCPSession(t, b)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()

	caps, _ := json.Marshal(cs.InitializeResult().Capabilities)
	if strings.Contains(string(caps), "logging") || strings.Contains(string(caps), "listChanged\":true") {
		t.Errorf("capabilities %s advertise logging or listChanged, which the server never sends", caps)
	}

	schemas := map[string]*jsonschema.Schema{}
	for _, s := range []*mcp.ClientSession{cs, open} {
		listed, err := s.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range listed.Tools {
			a := tool.Annotations
			if a == nil || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil {
				t.Errorf("%s: annotations %+v, want destructiveHint false and openWorldHint set", tool.Name, a)
				continue
			}
			if strings.HasPrefix(tool.Name, "propose_") && (a.ReadOnlyHint || !a.IdempotentHint || !*a.OpenWorldHint) {
				t.Errorf("%s: annotations %+v, want a non-read-only, idempotent, open-world proposal", tool.Name, a)
			}
			if tool.OutputSchema == nil {
				t.Errorf("%s declares no outputSchema", tool.Name)
				continue
			}
			raw, _ := json.Marshal(tool.OutputSchema)
			c := jsonschema.NewCompiler()
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err == nil {
				err = c.AddResource(tool.Name+".json", doc)
			}
			var compiled *jsonschema.Schema
			if err == nil {
				compiled, err = c.Compile(tool.Name + ".json")
			}
			if err != nil {
				t.Fatalf("%s: output schema %s: %v", tool.Name, raw, err)
			}
			schemas[tool.Name] = compiled
			if tool.Name == "open_task" {
				in, _ := json.Marshal(tool.InputSchema)
				var s struct{ Required []string }
				_ = json.Unmarshal(in, &s)
				if !slices.Contains(s.Required, "allowed_actions") {
					t.Errorf("open_task requires %v, want allowed_actions among them", s.Required)
				}
			}
		}
	}

	validate := func(s *mcp.ClientSession, name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if schemas[name] == nil {
			t.Fatalf("no schema for %s", name)
		}
		if err := schemas[name].Validate(v); err != nil {
			t.Errorf("%s (error %v): %s does not validate against its outputSchema: %v", name, res.IsError, raw, err)
		}
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	order := b.DamagedOrder(t)
	validate(cs, "list_orders", map[string]any{})
	validate(cs, "get_order", map[string]any{"order_id": order})
	refund := validate(cs, "propose_issue_refund", map[string]any{"order_id": order, "amount_cents": 1500, "reason_code": "damaged", "summary": "Refund $15.00"})
	validate(cs, "propose_change_shipping_address", map[string]any{"order_id": matOrder(t, b), "address": webtest.JordanAddress, "summary": "New address"})
	validate(cs, "propose_resend_receipt", map[string]any{"order_id": order, "summary": "Resend the receipt"})
	validate(cs, "get_invocation", map[string]any{"invocation_id": refund["id"]})
	validate(cs, "wait_for_outcome", map[string]any{"invocation_id": refund["id"], "seconds": 1})
	validate(cs, "wait_for_outcome", map[string]any{"invocation_id": refund["id"], "seconds": 31})
	if bad := validate(cs, "propose_issue_refund", map[string]any{"order_id": order, "amount_cents": 1, "reason_code": "whim"}); bad["code"] == nil {
		t.Errorf("a refused proposal answered %v, want the API's error body", bad)
	}
	validate(cs, "get_invocation", map[string]any{"invocation_id": "inv_nope"})
	validate(cs, "pause_task", map[string]any{})
	task := validate(open, "open_task", map[string]any{"customer_ref": webtest.Jordan, "conversation_id": "schema-1", "allowed_actions": []string{"issue_refund"}})
	validate(open, "list_orders", map[string]any{"task_id": task["id"]})
	validate(open, "open_task", map[string]any{"customer_ref": webtest.Jordan, "conversation_id": "schema-2"})
}

// openMCPSession connects with the URL and the key alone, as a stock client.
func openMCPSession(t *testing.T, b *webtest.Stack) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "stock-client", Version: "1"}, nil)
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: b.Server.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{key: b.Key}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
}

// TestMCPCallBuildsItsServerOnce: the SDK asks for the server twice per
// request (to check the protocol version, then to serve); the catalog
// behind it is read once, so no statement of a tools/list is sent twice.
func TestMCPCallBuildsItsServerOnce(t *testing.T) {
	t.Parallel()
	rec := &webtest.Statements{}
	tb := webtest.New(t, webtest.WithShop(), webtest.WithQueryTracer(rec))
	b := tb
	b.Assistant, b.Key = b.NewAssistant(t, "support-bot")
	b.Task = b.NewTask(t, b.Key, "conv-1", []string{"issue_refund"})
	var res webtest.APIResponse
	sql := rec.During(func() {
		res = mcpPost(t, b, "/mcp?task="+b.TaskID(), "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "MCP-Protocol-Version", "2025-11-25")
	})
	if res.Status != http.StatusOK {
		t.Fatalf("tools/list: %d %s", res.Status, res.Body)
	}
	seen := map[string]int{}
	for _, q := range sql {
		seen[q]++
	}
	for q, n := range seen {
		if n > 1 {
			t.Errorf("tools/list sent %d times: %s", n, q)
		}
	}
}
