package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/controlplane"
)

// TestCustomerStopIsAPersonsPause: the customer proved for their request
// presses "Stop this" on its page. The task is paused as the customer's —
// a person's — pause, recorded with their proof; the assistant's resume is
// 403 paused_by_person; the request is not dispatched when confirmed after
// it; and nothing reaches the shop.
func TestCustomerStopIsAPersonsPause(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	b.stageForCustomer(t, "issue_refund")
	res := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+b.taskID()+"/invocations", map[string]any{"action": "issue_refund",
		"args": map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}}).want(t, http.StatusCreated)
	id := res.json["id"].(string)
	link := strings.TrimPrefix(res.json["next"].(map[string]any)["url"].(string), b.srv.URL)

	c := b.client(t)
	page := c.open(link)
	tok, _ := page.doc(t).Find(`[data-testid="stop-form"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		t.Fatalf("the request page offers no \"Stop this\"\n%s", page.body)
	}
	if res := c.post("/requests/"+id+"/stop", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("stop: %d\n%s", res.StatusCode, res.body)
	}
	ctx := context.Background()
	task, err := b.cp.Task(ctx, b.taskID())
	if err != nil {
		t.Fatal(err)
	}
	if task.State != controlplane.TaskPaused || task.PausedBy.Kind != controlplane.ActorCustomer || !task.PausedByPerson() {
		t.Fatalf("after the customer's stop the task is %s, paused by %+v; want a person's pause by the customer", task.State, task.PausedBy)
	}
	events, err := b.cp.Timeline(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var recorded bool
	for _, e := range events {
		if e.Action == "task.paused" {
			recorded = e.ActorKind == controlplane.ActorCustomer && e.Data["proof"] == "code"
		}
	}
	if !recorded {
		t.Errorf("the audit trail does not record the pause as the customer's, with their proof: %+v", events)
	}
	if page := c.get("/requests/" + id); page.doc(t).Find(`[data-testid="stop-form"]`).Length() != 0 {
		t.Error("\"Stop this\" is still offered on a stopped task")
	}

	resume := b.call(t, b.key, http.MethodPost, "/api/v1/tasks/"+b.taskID()+"/resume", map[string]any{"expected_version": task.Version})
	resume.want(t, http.StatusForbidden)
	if resume.json["code"] != "paused_by_person" {
		t.Errorf("the assistant's resume after the customer's stop: %v, want paused_by_person", resume.json["code"])
	}
	if res := c.post("/requests/"+id+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm after stop: %d", res.StatusCode)
	}
	if _, err := b.cp.DispatchOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.inv(t, id).State; got == controlplane.Dispatching || got == controlplane.Completed {
		t.Errorf("the request is %s after the customer's stop, want not dispatched", got)
	}
	if effects := b.shopEffects(t, ""); len(effects) != 0 {
		t.Errorf("the shop recorded %d effects after the customer's stop", len(effects))
	}
}
