package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/controlplane"
	"countersign/internal/slowtest"
)

// inspectorPath is where `make test` puts the MCP Inspector CLI (fetched
// from npm by .ci/install-deps); MCP_INSPECTOR overrides it.
func inspectorPath() string {
	if p := os.Getenv("MCP_INSPECTOR"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".cache", "mcp-inspector", "node_modules", ".bin", "mcp-inspector")
}

// inspector runs the Inspector CLI against the console's /mcp as a stock
// client configured with the URL and the key alone, and decodes its JSON.
func inspector(t *testing.T, url, key string, args ...string) map[string]any {
	t.Helper()
	bin := inspectorPath()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the MCP Inspector CLI is missing (run `make test`, which fetches it from npm): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--cli", url, "--transport", "http",
		"--header", "Authorization: Bearer " + key}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NO_COLOR=1")
	// A tool that answers an error makes the CLI exit non-zero after
	// printing the result: the result is what the test reads.
	out, runErr := cmd.Output()
	var res map[string]any
	if err := json.NewDecoder(strings.NewReader(string(out))).Decode(&res); err != nil {
		var stderr string
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("inspector %v: %v, output not JSON: %v\n%s\n%s", args, runErr, err, out, stderr)
	}
	return res
}

// toolJSON decodes a tools/call result's structured content.
func toolJSON(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	if res["isError"] == true {
		t.Fatalf("the tool answered an error: %v", res)
	}
	sc, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("no structured content in %v", res)
	}
	return sc
}

// TestStockMCPClientWithOnlyTheKey connects the official MCP Inspector CLI
// (a real foreign client, from npm) with nothing but /mcp and the key, as
// Claude Desktop or an IDE is configured: it lists the tools, opens a task,
// calls a read tool and proposes a refund, which waits for the customer.
func TestStockMCPClientWithOnlyTheKey(t *testing.T) {
	slowtest.Skip(t, "runs the MCP Inspector CLI, a Node program")
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	url := b.Server.URL + "/mcp"
	list := inspector(t, url, b.Key, "--method", "tools/list")
	names := map[string]bool{}
	for _, tool := range list["tools"].([]any) {
		m := tool.(map[string]any)
		names[m["name"].(string)] = true
		// The hints and output schema reach a stock client as declared.
		a, _ := m["annotations"].(map[string]any)
		if a["destructiveHint"] != false || a["openWorldHint"] == nil || m["outputSchema"] == nil {
			t.Errorf("%s: annotations %v, outputSchema %v: want destructiveHint false, openWorldHint and an output schema", m["name"], a, m["outputSchema"] != nil)
		}
	}
	for _, want := range []string{"open_task", "list_orders", "propose_issue_refund", "get_invocation", "pause_task"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	task := toolJSON(t, inspector(t, url, b.Key, "--method", "tools/call", "--tool-name", "open_task",
		"--tool-arg", "customer_ref="+webtest.Jordan, "conversation_id=inspector-1", `allowed_actions=["issue_refund"]`))
	id, _ := task["id"].(string)
	if !strings.HasPrefix(id, "tsk_") || task["write_budget"] != float64(5) {
		t.Fatalf("open_task: %v", task)
	}
	orders := toolJSON(t, inspector(t, url, b.Key, "--method", "tools/call", "--tool-name", "list_orders", "--tool-arg", "task_id="+id))
	order := ""
	for _, o := range orders["data"].([]any) {
		if m := o.(map[string]any); strings.Contains(m["display"].(string), "Walnut desk lamp") {
			order = m["order_id"].(string)
		}
	}
	if order == "" {
		t.Fatalf("list_orders found no lamp: %v", orders)
	}
	inv := toolJSON(t, inspector(t, url, b.Key, "--method", "tools/call", "--tool-name", "propose_issue_refund",
		"--tool-arg", "task_id="+id, "order_id="+order, "amount_cents=1500", "reason_code=damaged"))
	if inv["state"] == nil || inv["task_id"] != id {
		t.Fatalf("propose_issue_refund: %v", inv)
	}
	got := b.Invocation(t, inv["id"].(string))
	if got.TaskID != id || got.State == controlplane.Completed {
		t.Errorf("the proposal is %s in %s, want a pending one in the opened task", got.State, got.TaskID)
	}
	// Another assistant's task id answers like a missing one.
	_, otherKey := b.NewAssistant(t, "other-bot")
	if res := inspector(t, url, otherKey, "--method", "tools/call", "--tool-name", "list_orders", "--tool-arg", "task_id="+id); res["isError"] != true {
		t.Errorf("another assistant read through this task: %v", res)
	}
}
