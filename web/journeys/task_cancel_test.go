package journeys_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/internal/controlplane"
)

// withdrawnReason is the reason the API gives a request withdrawn with
// its cancelled task.
const withdrawnReason = "The task was cancelled before this was decided, so it was withdrawn; nothing was sent."

// TestAPISaysACancelledTaskWithdrewItsRequests: cancelling a task through
// the API withdraws its request awaiting approval; GET
// /api/v1/invocations/{id}, GET /api/v1/tasks/{id} and the
// invocation.not_dispatched outcome webhook say so, in words that claim
// nothing was done; the request leaves the agents' queue, and the task's
// timeline in the console says it was withdrawn.
func TestAPISaysACancelledTaskWithdrewItsRequests(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	posts := b.ReceiveWebhooks(t)
	id := b.ProposeRefund(t, b.DamagedOrder(t))
	if n, _, err := b.Store.CountPending(ctx); err != nil || n != 1 {
		t.Fatalf("queue before the cancel: %d, %v", n, err)
	}
	task := b.Call(t, b.Key, http.MethodGet, "/api/v1/tasks/"+b.TaskID(), nil).Want(t, http.StatusOK)
	b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks/"+b.TaskID()+"/cancel", map[string]any{"expected_version": task.JSON["version"]}).
		Want(t, http.StatusOK)

	check := func(where string, inv map[string]any) {
		t.Helper()
		r, _ := inv["reason"].(map[string]any)
		next, _ := inv["next"].(map[string]any)
		if inv["state"] != "not_dispatched" || r["code"] != "task_cancelled" || r["message"] != withdrawnReason || next["kind"] != "none" {
			t.Errorf("%s: state %v, reason %v, next %v", where, inv["state"], inv["reason"], inv["next"])
		}
		if say, _ := inv["say"].(string); say != "This request was withdrawn because the task it belonged to was cancelled, so nothing has changed." {
			t.Errorf("%s: say %q", where, say)
		}
	}
	got := b.Call(t, b.Key, http.MethodGet, "/api/v1/invocations/"+id, nil).Want(t, http.StatusOK)
	check("GET /invocations/{id}", got.JSON)
	task = b.Call(t, b.Key, http.MethodGet, "/api/v1/tasks/"+b.TaskID(), nil).Want(t, http.StatusOK)
	invs, _ := task.JSON["invocations"].([]any)
	byState, _ := task.JSON["invocations_by_state"].(map[string]any)
	if task.JSON["state"] != "cancelled" || len(invs) != 1 || byState["not_dispatched"] != float64(1) || byState["awaiting_approval"] != nil {
		t.Fatalf("GET /tasks/{id}: state %v, %d invocations, by state %v", task.JSON["state"], len(invs), byState)
	}
	check("GET /tasks/{id}", invs[0].(map[string]any))
	if n, _, err := b.Store.CountPending(ctx); err != nil || n != 0 {
		t.Errorf("queue after the cancel: %d, %v; want 0", n, err)
	}
	// The task's timeline in the console says what the cancel withdrew.
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	_, lines := webtest.TimelineRows(t, c, b.TaskID())
	timeline := strings.Join(lines, "\n")
	if !strings.Contains(timeline, "cancelled the task; nothing was undone; 1 request waiting for a decision was withdrawn.") ||
		!strings.Contains(timeline, "withdrawn: the task was cancelled before it was decided; nothing was sent.") {
		t.Errorf("the console's timeline:\n%s", timeline)
	}

	b.DeliverWebhooks(t)
	var told []string
	for _, p := range posts() {
		told = append(told, p.Event)
		if p.Event == "invocation.not_dispatched" {
			var inv map[string]any
			if err := json.Unmarshal(p.Invocation, &inv); err != nil {
				t.Fatal(err)
			}
			check("webhook", inv)
		}
	}
	if strings.Join(told, ",") != "invocation.not_dispatched" {
		t.Errorf("webhooks %v, want one invocation.not_dispatched", told)
	}
}

// TestCustomerSeesARequestWithdrawnWithItsTask: a request waiting for the
// customer leaves "Waiting for you" for Finished when its task is
// cancelled, with a badge that says why; its page says it was withdrawn
// and nothing changed, with no confirm button and no consequences as
// facts; its confirmation link no longer offers a code (nothing to
// decide); a confirm posted from a page opened before the cancel sends
// nothing.
func TestCustomerSeesARequestWithdrawnWithItsTask(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	ctx := context.Background()
	inv, link := b.PendingRefund(t)
	u, err := b.Accounts.Create(ctx, accounts.NewUser{Email: webtest.Jordan, Name: "Jordan Lee", Role: accounts.Customer, Password: "correct horse jordan"})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Client(t)
	c.MustSignIn(webtest.User{User: u, Password: "correct horse jordan"})
	list := c.Get("/requests")
	if got := webtest.TextByTestID(list, t, "waiting-count"); got != "(1)" {
		t.Fatalf("before the cancel, waiting for you: %q, want (1)", got)
	}
	tok := c.PageCSRF(c.Get("/requests/" + inv.ID))
	stranger := b.Client(t)
	if res := stranger.Get(link); res.Doc(t).Find(`[data-testid="send-link-form"]`).Length() != 1 {
		t.Fatalf("before the cancel the link offers no mail to decide (%d)", res.StatusCode)
	}

	if _, err := b.Control.ChangeTask(ctx, controlplane.AssistantActor("asst_test", "Test assistant"), inv.TaskID, controlplane.TaskCancel, 0); err != nil {
		t.Fatal(err)
	}

	list = c.Get("/requests")
	doc := list.Doc(t)
	if doc.Find(`[data-testid="waiting"]`).Length() != 0 {
		t.Error("the withdrawn request is still under Waiting for you")
	}
	row := doc.Find(`[data-testid="done"] [data-testid="request-row"][data-id="` + inv.ID + `"]`)
	if badge := strings.TrimSpace(row.Find(`[data-testid="row-badge"]`).Text()); badge != "Withdrawn: the task was cancelled" {
		t.Errorf("under Finished: badge %q (row found %d)", badge, row.Length())
	}
	page := c.Get("/requests/" + inv.ID)
	status := webtest.Squash(page.Doc(t).Find(`[data-testid="status"]`).Text())
	if !strings.Contains(status, "This request was withdrawn: the task it belonged to was cancelled. Nothing was changed.") ||
		!strings.Contains(status, "The assistant cancelled the conversation this came from before it was decided.") {
		t.Errorf("the request page says %q", status)
	}
	if page.Doc(t).Find(`[data-testid="confirm"]`).Length() != 0 {
		t.Error("the withdrawn request still has a confirm button")
	}
	if strings.Contains(page.Text, "What this means for you") {
		t.Error("the withdrawn request states its consequences as facts or as pending")
	}
	if res := c.Post("/requests/"+inv.ID+"/confirm", url.Values{"_csrf": {tok}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a confirm from the page opened before the cancel: %d, want 303 to the outcome", res.StatusCode)
	}
	if sent, err := b.Control.Dispatch(ctx, inv.ID); err != nil || sent {
		t.Fatalf("dispatch: sent %v, %v; want not sent", sent, err)
	}
	if got := b.Invocation(t, inv.ID); !got.Withdrawn() || len(b.ShopEffects(t, got.IdempotencyKey)) != 0 {
		t.Errorf("after the late confirm: %s (withdrawn %v)", got.State, got.Withdrawn())
	}

	res := stranger.Get(link)
	if res.StatusCode != http.StatusOK || res.Doc(t).Find(`[data-testid="send-link-form"]`).Length() != 0 ||
		!strings.Contains(res.Text, "replaced or withdrawn") {
		t.Errorf("the link after the cancel: %d, still offers a mail to decide or does not say it was withdrawn\n%s", res.StatusCode, res.Text)
	}
}
