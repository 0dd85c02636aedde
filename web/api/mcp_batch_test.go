package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"countersign/web/webtest"
)

// TestMCPRefusesBatches sends one JSON-RPC batch of 300 tools/call under
// the oldest protocol version the SDK still batches for: it is refused as
// an invalid request and no proposal is recorded. A stock client (one
// message per POST) keeps working, and each of its calls spends a token of
// the key's rate limit.
func TestMCPRefusesBatches(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	batch := make([]map[string]any, 300)
	for i := range batch {
		batch[i] = map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": map[string]any{
			"name": "propose_issue_refund", "arguments": map[string]any{"order_id": order, "amount_cents": 100 + i,
				"reason_code": "damaged", "summary": "Refund", "idempotency_key": fmt.Sprintf("batch-%d", i)}}}
	}
	raw, _ := json.Marshal(batch)
	res := b.Call(t, b.Key, http.MethodPost, "/mcp?task="+b.TaskID(), string(raw),
		"Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-03-26")
	res.Want(t, http.StatusBadRequest)
	if e, _ := res.JSON["error"].(map[string]any); res.JSON["jsonrpc"] != "2.0" || e["code"] != float64(-32600) {
		t.Errorf("batch: %s, want a JSON-RPC invalid request (-32600)", res.Body)
	}
	invs, err := b.Store.InvocationsForTask(context.Background(), b.TaskID())
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) != 0 {
		t.Errorf("a refused batch recorded %d proposals, want 0", len(invs))
	}

	// The go-sdk client sends one message per request and still works.
	cs, err := mcpSession(t, b, b.Key, b.TaskID())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callTool(t, cs, "propose_issue_refund", map[string]any{"order_id": order, "amount_cents": 1500, "reason_code": "damaged", "summary": "Refund $15.00"})
}

// TestMCPCallsEachSpendARateToken: under a rate of 3 a minute, three MCP
// calls go through and the fourth is refused with 429, whatever the
// transport: each call is one request and one token.
func TestMCPCallsEachSpendARateToken(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	srv := b.ServeAnother(t, webtest.WithAPIRate(3))
	call := func(id int) webtest.APIResponse {
		return webtest.CallAPI(t, srv.URL, b.Key, http.MethodPost, "/mcp?task="+b.TaskID(),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_orders","arguments":{}}}`, id),
			"Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-06-18")
	}
	for i := range 3 {
		call(i+1).Want(t, http.StatusOK)
	}
	if res := call(4); res.Status != http.StatusTooManyRequests {
		t.Errorf("fourth MCP call: %d %s, want 429", res.Status, res.Body)
	}
}
