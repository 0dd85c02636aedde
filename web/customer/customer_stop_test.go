package customer_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/controlplane"
)

// TestCustomerStopIsAPersonsPause: the customer proved for their request
// presses "Stop this" on its page. The task is paused as the customer's —
// a person's — pause, recorded with their proof; the assistant's resume is
// 403 paused_by_person; the request is not dispatched when confirmed after
// it; and nothing reaches the shop.
func TestCustomerStopIsAPersonsPause(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.StageForCustomer(t, "issue_refund")
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/invocations", map[string]any{"action": "issue_refund",
		"args": map[string]any{"order_id": "walnut lamp", "amount_cents": 4210, "reason_code": "damaged"}}).Want(t, http.StatusCreated)
	id := res.JSON["id"].(string)
	link := strings.TrimPrefix(res.JSON["next"].(map[string]any)["url"].(string), b.Server.URL)

	c := b.Client(t)
	page := c.Open(link)
	tok, _ := page.Doc(t).Find(`[data-testid="stop-form"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		t.Fatalf("the request page offers no \"Stop this\"\n%s", page.Text)
	}
	if res := c.Post("/requests/"+id+"/stop", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("stop: %d\n%s", res.StatusCode, res.Text)
	}
	ctx := context.Background()
	task, err := b.Control.Task(ctx, b.TaskID())
	if err != nil {
		t.Fatal(err)
	}
	if task.State != controlplane.TaskPaused || task.PausedBy.Kind != controlplane.ActorCustomer || !task.PausedByPerson() {
		t.Fatalf("after the customer's stop the task is %s, paused by %+v; want a person's pause by the customer", task.State, task.PausedBy)
	}
	events, err := b.Control.Timeline(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var recorded bool
	for _, e := range events {
		if e.Action == "task.paused" {
			recorded = e.ActorKind == controlplane.ActorCustomer && e.Data["proof"] == "link"
		}
	}
	if !recorded {
		t.Errorf("the audit trail does not record the pause as the customer's, with their proof: %+v", events)
	}
	if page := c.Get("/requests/" + id); page.Doc(t).Find(`[data-testid="stop-form"]`).Length() != 0 {
		t.Error("\"Stop this\" is still offered on a stopped task")
	}

	resume := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/resume", map[string]any{"expected_version": task.Version})
	resume.Want(t, http.StatusForbidden)
	if resume.JSON["code"] != "paused_by_person" {
		t.Errorf("the assistant's resume after the customer's stop: %v, want paused_by_person", resume.JSON["code"])
	}
	if res := c.Post("/requests/"+id+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("confirm after stop: %d", res.StatusCode)
	}
	if sent, err := b.Control.Dispatch(ctx, id); err != nil || sent {
		t.Fatalf("dispatch: sent %v, %v; want not sent", sent, err)
	}
	if got := b.Invocation(t, id).State; got == controlplane.Dispatching || got == controlplane.Completed {
		t.Errorf("the request is %s after the customer's stop, want not dispatched", got)
	}
	if effects := b.ShopEffects(t, ""); len(effects) != 0 {
		t.Errorf("the shop recorded %d effects after the customer's stop", len(effects))
	}
}
