package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"countersign/web/webtest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPOpenTaskIsVouchedForLikeTheAPI opens tasks with MCP open_task as
// an assistant without the any-customer grant: refused without the
// business's assertion, opened with one, and its schema offers the field.
func TestMCPOpenTaskIsVouchedForLikeTheAPI(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.Assistants.SetSiteSecrets(map[string][]byte{"shop": webtest.ShopSiteSecret})
	bot, key := b.NewVouchedAssistant(t, "mcp-widget-bot")
	cs, err := mcpSession(t, b, key, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if raw, _ := json.Marshal(tool.InputSchema); tool.Name == "open_task" && !strings.Contains(string(raw), `"customer_assertion"`) {
			t.Errorf("open_task's schema lacks customer_assertion: %s", raw)
		}
	}
	const customer = "customer@demo.countersign.test"
	args := map[string]any{"customer_ref": customer, "conversation_id": "mcp-conv", "allowed_actions": []string{"issue_refund"}}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_task", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(res.StructuredContent); !res.IsError || !strings.Contains(string(raw), `"code":"customer_not_vouched"`) {
		t.Errorf("open_task without an assertion: error=%v %s", res.IsError, raw)
	}
	args["customer_assertion"] = b.VouchFor(bot.ID, customer, nil)
	if task := callTool(t, cs, "open_task", args); task["id"] == nil {
		t.Errorf("open_task with an assertion: %v", task)
	}
}
