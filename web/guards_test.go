package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"countersign/accounts"
	"countersign/controlplane"
)

// Issue 11, item 3: the guards meant for people hold whatever an assistant
// holds (its key, its MCP session, other words for the same request).

// TestAssistantCannotLiftAPersonsPause: a pause made by an agent or an
// admin is refused to the assistant's resume (403 paused_by_person with a
// hint) and lifted by a person on the task page; a pause the assistant made
// itself (MCP pause_task) it may resume.
func TestAssistantCannotLiftAPersonsPause(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	ctx := context.Background()
	id := b.taskID()
	api := "/api/v1/tasks/" + id
	version := func() float64 {
		t.Helper()
		return b.call(t, b.key, http.MethodGet, api, nil).want(t, http.StatusOK).json["version"].(float64)
	}
	state := func() string {
		t.Helper()
		return b.call(t, b.key, http.MethodGet, api, nil).want(t, http.StatusOK).json["state"].(string)
	}

	agent := b.client(t)
	agent.mustSignIn(b.users[accounts.Agent])
	tok := agent.csrf("/tasks/" + id)
	if res := agent.post("/tasks/"+id+"/pause", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("agent pause: %d\n%s", res.StatusCode, res.body)
	}
	refused := b.call(t, b.key, http.MethodPost, api+"/resume", map[string]any{"expected_version": version()}).want(t, http.StatusForbidden)
	if refused.json["code"] != "paused_by_person" || refused.json["hint"] == "" || refused.json["retryable"] != false {
		t.Errorf("assistant resuming an agent's pause: %s", refused.body)
	}
	if got := state(); got != "paused" {
		t.Fatalf("after the refused resume the task is %s", got)
	}
	// MCP offers no way around it: no tool resumes a task.
	cs, err := b.mcpSession(t, b.key, id)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if strings.Contains(tl.Name, "resume") || strings.Contains(tl.Name, "unblock") || strings.Contains(tl.Name, "lift") {
			t.Errorf("MCP offers %s", tl.Name)
		}
	}
	if res := agent.post("/tasks/"+id+"/resume", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("agent resume: %d\n%s", res.StatusCode, res.body)
	}

	// An admin's pause holds the same way.
	admin := b.users[accounts.Admin]
	if _, err := b.cp.Pause(ctx, controlplane.UserActor(admin.ID, "admin", admin.Name), id, 0); err != nil {
		t.Fatal(err)
	}
	b.call(t, b.key, http.MethodPost, api+"/resume", map[string]any{"expected_version": version()}).want(t, http.StatusForbidden)
	if _, err := b.cp.Resume(ctx, controlplane.UserActor(admin.ID, "admin", admin.Name), id, 0); err != nil {
		t.Fatal(err)
	}

	// The assistant's own pause, through MCP, it may lift.
	if got := callTool(t, cs, "pause_task", map[string]any{}); got["state"] != "paused" {
		t.Fatalf("pause_task: %v", got)
	}
	resumed := b.call(t, b.key, http.MethodPost, api+"/resume", map[string]any{"expected_version": version()}).want(t, http.StatusOK)
	if resumed.json["state"] != "active" {
		t.Errorf("assistant resuming its own pause: %s", resumed.body)
	}
}
