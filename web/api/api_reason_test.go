package api_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
)

// TestAPIReconciledInvocationDropsTheUnknownError: a write whose answer
// was lost is unverified with the outcome_unknown error ("Do not
// retry…"); once reconciliation finds it completed, the API no longer
// carries that error, and neither does the stored invocation.
func TestAPIReconciledInvocationDropsTheUnknownError(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	order := b.DamagedOrder(t)
	id := b.ProposeRefund(t, order)
	agent := b.Users[accounts.Agent]
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agent.Actor(), InvocationID: id, Verb: controlplane.StaffApprove, Version: 0, ArgsHash: b.Invocation(t, id).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	if err := b.Shop.SetFault(demoshop.FaultRule{Route: "POST /refunds", DropAfterCommit: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Control.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	b.Shop.ClearFaults()
	lost := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
	if e, _ := lost.JSON["error"].(map[string]any); lost.JSON["state"] != "unverified" || e["code"] != "outcome_unknown" {
		t.Fatalf("after a lost answer: state %v, error %v", lost.JSON["state"], lost.JSON["error"])
	}
	rec := b.Call(t, b.Key, http.MethodPost, "/api/v1/invocations/"+id+"/reconcile", nil).Want(t, http.StatusOK)
	if rec.JSON["state"] != "completed" || rec.JSON["error"] != nil {
		t.Errorf("reconcile answer: state %v, error %v", rec.JSON["state"], rec.JSON["error"])
	}
	got := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
	if got.JSON["state"] != "completed" || got.JSON["error"] != nil || got.JSON["reason"] != nil {
		t.Errorf("completed after reconciling: state %v, error %v, reason %v", got.JSON["state"], got.JSON["error"], got.JSON["reason"])
	}
	if strings.Contains(got.Body, "Do not retry") {
		t.Errorf("the completed invocation still says %q", "Do not retry")
	}
	if inv := b.Invocation(t, id); inv.Error != nil {
		t.Errorf("the stored invocation keeps the stale error: %+v", inv.Error)
	}
}

// TestAPIReasonSaysWhyNotDispatchedOrRejected: an invocation that was not
// dispatched or was rejected carries reason {code, message} outside say;
// an open or completed one carries none.
func TestAPIReasonSaysWhyNotDispatchedOrRejected(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	agent := b.Users[accounts.Agent]
	order := b.DamagedOrder(t)

	rejected := b.ProposeRefund(t, order)
	open := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+rejected, nil).Want(t, http.StatusOK)
	if _, present := open.JSON["reason"]; !present || open.JSON["reason"] != nil {
		t.Errorf("awaiting approval: reason %v (present %v), want null", open.JSON["reason"], present)
	}
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agent.Actor(), InvocationID: rejected, Verb: controlplane.StaffReject, Version: 0, Reason: controlplane.OtherReason, Other: "the lamp was already replaced"}); err != nil {
		t.Fatal(err)
	}
	got := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+rejected, nil).Want(t, http.StatusOK)
	if r, _ := got.JSON["reason"].(map[string]any); got.JSON["state"] != "rejected" || r["code"] != "rejected_by_agent" ||
		r["message"] != "The lamp was already replaced." {
		t.Errorf("rejected: state %v, reason %v", got.JSON["state"], got.JSON["reason"])
	}

	// Approved, then the task is paused before the permit: not dispatched.
	paused := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"action": "issue_refund",
		"args": webtest.RefundArgs(order, 1200), "summary": "Refund $12.00"}).Want(t, http.StatusCreated)
	pid := paused.JSON["id"].(string)
	if _, err := b.Control.StaffDecide(ctx, controlplane.StaffDecision{Actor: agent.Actor(), InvocationID: pid, Verb: controlplane.StaffApprove, Version: 0, ArgsHash: b.Invocation(t, pid).ArgsHash}); err != nil {
		t.Fatal(err)
	}
	task := b.Call(t, b.Key, http.MethodGet, "/api/v1/tasks/"+b.TaskID(), nil).Want(t, http.StatusOK)
	b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/pause", map[string]any{"expected_version": task.JSON["version"]}).Want(t, http.StatusOK)
	if sent, err := b.Control.Dispatch(ctx, pid); err != nil || sent {
		t.Fatalf("dispatch: sent %v, %v; want not sent", sent, err)
	}
	got = b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+pid, nil).Want(t, http.StatusOK)
	if r, _ := got.JSON["reason"].(map[string]any); got.JSON["state"] != "not_dispatched" || r["code"] != "task_paused" ||
		r["message"] != "The task was paused before this could be sent." {
		t.Errorf("not dispatched: state %v, reason %v", got.JSON["state"], got.JSON["reason"])
	}

	// The field is documented in the OpenAPI document.
	doc := b.Call(t, "", http.MethodGet, "/api/v1/openapi.json", nil).Want(t, http.StatusOK)
	schemas := doc.JSON["components"].(map[string]any)["schemas"].(map[string]any)
	reason, _ := schemas["Invocation"].(map[string]any)["properties"].(map[string]any)["reason"].(map[string]any)
	props, _ := reason["properties"].(map[string]any)
	if props["code"] == nil || props["message"] == nil || !strings.Contains(reason["description"].(string), "not dispatched") {
		t.Errorf("openapi reason: %v", reason)
	}
}

// TestAPIReadToolsInAllowedActionsAreAccepted: read tools work in every
// task, so naming one in allowed_actions is accepted (bare or with its
// system); a task of read tools only is refused with a message that says
// read tools need not be listed; unknown names are still refused.
func TestAPIReadToolsInAllowedActionsAreAccepted(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	newTask := func(conv string, actions ...string) webtest.APIResponse {
		return b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "customer@demo.countersign.test",
			"conversation_id": conv, "allowed_actions": actions})
	}
	res := newTask("conv-reads", "get_order", "list_orders", "issue_refund").Want(t, http.StatusCreated)
	if got := res.JSON["allowed_actions"].([]any); len(got) != 3 {
		t.Errorf("allowed_actions echoed as %v", got)
	}
	id := res.JSON["id"].(string)
	modes := webtest.ToolModes(t, b.Call(t, b.Key, http.MethodGet, "/api/v1/tools?task="+id, nil).Want(t, http.StatusOK))
	if modes["get_order"] != "read" || modes["list_subscriptions"] != "read" || modes["issue_refund"] == "" || modes["cancel_subscription"] != "" {
		t.Errorf("tools of the task: %v", modes)
	}
	b.Call(t, b.Key, http.MethodPost, "/api/v1/tools/list_orders", map[string]any{"task": id, "args": map[string]any{}}).Want(t, http.StatusOK)
	newTask("conv-qualified", "shop/get_order", "shop/issue_refund").Want(t, http.StatusCreated)

	only := newTask("conv-only-reads", "get_order").Want(t, http.StatusUnprocessableEntity)
	msg, _ := only.JSON["fields"].(map[string]any)["allowed_actions"].(string)
	if !strings.Contains(msg, "read tools work in every task") {
		t.Errorf("read tools only: %q", msg)
	}
	bad := newTask("conv-bad", "get_order", "launch_rocket").Want(t, http.StatusUnprocessableEntity)
	if msg, _ := bad.JSON["fields"].(map[string]any)["allowed_actions"].(string); !strings.Contains(msg, `"launch_rocket"`) {
		t.Errorf("unknown name: %q", msg)
	}
}

// TestMCPToolDescriptionsReadAsSentences checks every tool description the
// MCP server generates, on a task's connection and on an open one: whole
// sentences (capital first, full stop last, no doubled spaces or stops),
// and each propose_ tool opening with "Propose to <its title>".
func TestMCPToolDescriptionsReadAsSentences(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	wantFirst := map[string]string{
		"propose_issue_refund":               "Propose to refund an order in the shop system.",
		"propose_cancel_subscription":        "Propose to cancel a subscription in the shop system.",
		"propose_reinstate_subscription":     "Propose to reinstate a cancelled subscription in the shop system.",
		"propose_resend_receipt":             "Propose to resend a receipt in the shop system.",
		"propose_update_product_description": "Propose to update a product description in the shop system.",
		"propose_change_shipping_address":    "Propose to change an order's shipping address in the shop system.",
	}
	// "Propose refund an order": a verb straight after "Propose".
	verbAfterPropose := regexp.MustCompile(`\bPropose (refund|cancel|reinstate|resend|update|change|send|issue)\b`)
	seen := map[string]bool{}
	for _, task := range []string{b.TaskID(), ""} {
		cs, err := mcpSession(t, b, b.Key, task)
		if err != nil {
			t.Fatal(err)
		}
		listed, err := cs.ListTools(ctx, nil)
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range listed.Tools {
			seen[tool.Name] = true
			d := tool.Description
			first := []rune(d)
			switch {
			case d == "":
				t.Errorf("%s has no description", tool.Name)
				continue
			case !unicode.IsUpper(first[0]):
				t.Errorf("%s does not start with a capital: %q", tool.Name, d)
			case !strings.HasSuffix(d, "."):
				t.Errorf("%s does not end with a full stop: %q", tool.Name, d)
			case strings.Contains(d, "  ") || strings.Contains(d, "..") || strings.Contains(d, " .") || strings.Contains(d, ".)"):
				t.Errorf("%s has a doubled space or stop: %q", tool.Name, d)
			case verbAfterPropose.MatchString(d):
				t.Errorf("%s: %q", tool.Name, verbAfterPropose.FindString(d))
			}
			if want, ok := wantFirst[tool.Name]; ok && !strings.HasPrefix(d, want+" ") {
				t.Errorf("%s begins %q, want %q", tool.Name, d[:min(len(d), len(want)+10)], want)
			}
		}
	}
	for name := range wantFirst {
		if !seen[name] {
			t.Errorf("%s was not offered", name)
		}
	}
	if !seen["open_task"] || !seen["get_order"] {
		t.Errorf("tools seen: %v", seen)
	}
}
