package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
)

// TestAManagerTakesOverAConversationFromSomeoneAway: an agent took a
// conversation and is away. Another agent may not take it over; a manager
// may, with a reason (CSRF-checked, a missing reason re-rendered with the
// summary), and the page, GET /api/v1/conversations/{id} and the outcome
// webhook say who took it from whom, when and why. The old holder's
// Resolve is then refused in words, their note kept; the manager's lands.
func TestAManagerTakesOverAConversationFromSomeoneAway(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	posts := b.ReceiveWebhooks(t)
	ho := b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "transactional_high",
		"mode": "handed_off", "task_id": b.TaskID(), "summary": "Wants a refund for the cracked lamp."}).Want(t, http.StatusCreated)
	id := int64(ho.JSON["id"].(float64))
	handoff := func() map[string]any {
		t.Helper()
		res := b.Call(t, b.Key, http.MethodGet, "/api/v1/conversations/conv-1", nil).Want(t, http.StatusOK)
		h, _ := res.JSON["handoff"].(map[string]any)
		return h
	}

	holder, manager := b.Users[accounts.Agent], b.Users[accounts.Manager]
	away := b.Client(t)
	away.MustSignIn(holder)
	away.Post(webtest.HandoffPath(id, "take"), url.Values{"_csrf": {away.CSRF("/handoffs")}})

	agent := b.Client(t)
	agent.MustSignIn(b.CreateUser(t, accounts.Agent))
	if n := agent.Get(webtest.HandoffPath(id, "")).Doc(t).Find(`[data-testid="take-over-form"]`).Length(); n != 0 {
		t.Errorf("another agent is offered a take-over")
	}
	if res := agent.Post(webtest.HandoffPath(id, "take-over"), url.Values{"_csrf": {agent.CSRF("/handoffs")}, "reason": {"Mine now."}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("an agent takes over from another: %d, want 403", res.StatusCode)
	}

	m := b.Client(t)
	m.MustSignIn(manager)
	page := m.Get(webtest.HandoffPath(id, "")).Doc(t)
	if page.Find(`[data-testid="take-over-form"] input[name="_csrf"]`).Length() != 1 {
		t.Fatalf("the manager is not offered a take-over form with the CSRF token")
	}
	if res := m.Post(webtest.HandoffPath(id, "take-over"), url.Values{"reason": {"Away."}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("take-over without the CSRF token: %d, want 403", res.StatusCode)
	}
	tok := m.CSRF("/handoffs")
	res := m.Post(webtest.HandoffPath(id, "take-over"), url.Values{"_csrf": {tok}, "reason": {" "}})
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("take-over without a reason: %d, want 422", res.StatusCode)
	}
	if ids := webtest.ErrorSummary(t, res.Doc(t)); len(ids) != 1 || ids[0] != "take-over-reason" {
		t.Errorf("the summary links to %v, want [take-over-reason]", ids)
	}
	const reason = "Sam is off today; the customer is waiting."
	if res := m.Post(webtest.HandoffPath(id, "take-over"), url.Values{"_csrf": {tok}, "reason": {reason}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("take-over: %d %s", res.StatusCode, res.Text)
	}
	page = m.Get(webtest.HandoffPath(id, "")).Doc(t)
	want := manager.Name + " took it over from " + holder.Name + " at "
	if got := page.Find(`[data-testid="taken-over"]`).Text(); !strings.Contains(got, want) || !strings.Contains(got, reason) {
		t.Errorf("the page says %q, want %q… and the reason", got, want)
	}
	if got := page.Find(`[data-testid="handoff-state-words"]`).Text(); !strings.Contains(got, "Taken by you") || page.Find(`[data-testid="resolve-form"]`).Length() != 1 {
		t.Errorf("after the take-over the manager's page says %q, and offers Resolve: %v", got, page.Find(`[data-testid="resolve-form"]`).Length() == 1)
	}
	h := handoff()
	over, _ := h["taken_over"].(map[string]any)
	if h["state"] != "taken" || h["by"] != manager.Name || over["from"] != holder.Name || over["by"] != manager.Name || over["reason"] != reason || over["at"] == nil {
		t.Errorf("the API says %v, want taken by %s, taken over from %s with the reason", h, manager.Name, holder.Name)
	}

	res = away.Post(webtest.HandoffPath(id, "resolve"), url.Values{"_csrf": {away.CSRF("/handoffs")}, "note": {"Refunded by phone."}})
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("the old holder resolves: %d, want 422", res.StatusCode)
	}
	doc := res.Doc(t)
	if got := doc.Find(`[data-testid="error-summary"]`).Text(); !strings.Contains(got, manager.Name+" took this conversation over from you") {
		t.Errorf("the old holder is told %q", strings.Join(strings.Fields(got), " "))
	}
	if got := doc.Find(`#kept-text`).Text(); got != "Refunded by phone." {
		t.Errorf("the old holder's note is not kept: %q", got)
	}
	if res := m.Post(webtest.HandoffPath(id, "resolve"), url.Values{"_csrf": {tok}, "note": {"Refunded $7.00 by phone."}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the manager resolves: %d", res.StatusCode)
	}
	api := b.Call(t, b.Key, http.MethodGet, "/api/v1/conversations/conv-1", nil).Want(t, http.StatusOK)
	if h := api.JSON["handoff"].(map[string]any); h["state"] != "resolved" || h["taken_over"] == nil {
		t.Errorf("once resolved the API says %v, want resolved with the take-over", h)
	}
	b.DeliverWebhooks(t)
	told := posts()
	if len(told) != 1 || told[0].Event != "handoff.resolved" {
		t.Fatalf("webhooks %+v, want one handoff.resolved", told)
	}
	var got map[string]any
	if err := json.Unmarshal(told[0].Conversation, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(api.JSON, got); diff != "" {
		t.Errorf("the webhook's conversation differs from the API's (-api +webhook):\n%s", diff)
	}
}
