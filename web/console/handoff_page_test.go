package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
	"countersign/internal/webhooks"
)

// TestHandoffTakeLandsOnItsPageAndResolvingTellsTheAssistant follows one
// hand-off: the assistant hands a conversation over; the agent takes it
// and lands on its page (the conversation, the customer, the draft);
// resolving needs a note and the CSRF token, is recorded once (a second
// person is told plainly), and the assistant reads the outcome in GET
// /api/v1/conversations/{id} and in a handoff.resolved webhook.
func TestHandoffTakeLandsOnItsPageAndResolvingTellsTheAssistant(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	ctx := context.Background()
	posts := b.receiveWebhooks(t)

	order := b.damagedOrder(t)
	b.call(t, b.key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "ambiguous", "mode": "answered",
		"task_id": b.taskID()}).want(t, http.StatusCreated)
	ho := b.call(t, b.key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off",
		"task_id": b.taskID(), "summary": "Wants a refund for the walnut lamp; says it arrived cracked.", "facts": map[string]any{"order": order},
		"would_propose": map[string]any{"action": "issue_refund", "args": refundArgs(order, 700)}}).want(t, http.StatusCreated)
	id := int64(ho.json["id"].(float64))
	state := func() map[string]any {
		t.Helper()
		res := b.call(t, b.key, http.MethodGet, "/api/v1/conversations/conv-1", nil).want(t, http.StatusOK)
		h, _ := res.json["handoff"].(map[string]any)
		return h
	}
	if got := state(); got["state"] != "waiting" || got["id"] != float64(id) {
		t.Fatalf("before anyone took it the API says %v, want waiting", got)
	}
	other, otherKey := b.newAssistant(t, "other-bot")
	_ = other
	b.call(t, otherKey, http.MethodGet, "/api/v1/conversations/conv-1", nil).want(t, http.StatusNotFound)

	agent, manager := b.users[accounts.Agent], b.users[accounts.Manager]
	c := b.client(t)
	c.mustSignIn(agent)
	tok := c.csrf("/handoffs")
	card := c.get("/handoffs").doc(t).Find(fmt.Sprintf(`[data-testid="handoff-%d"]`, id))
	if got := card.Find(`[data-testid="handoff-customer"]`).Text(); !strings.Contains(got, "customer@demo.countersign.test") {
		t.Errorf("the card does not name the customer: %q", got)
	}
	res := c.post(handoffPath(id, "take"), url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != handoffPath(id, "") {
		t.Fatalf("take: %d to %q, want 303 to the hand-off's page", res.StatusCode, res.Header.Get("Location"))
	}
	page := c.get(handoffPath(id, "")).doc(t)
	for sel, want := range map[string]string{
		`[data-testid="flash"]`:            "You took the conversation",
		`[data-testid="handoff-state"]`:    "Taken by you",
		`[data-testid="handoff-summary"]`:  "arrived cracked",
		`[data-testid="customer-ref"]`:     "customer@demo.countersign.test",
		`[data-testid="conversation-log"]`: "Answered",
		`[data-testid="handoff-draft"]`:    "$7.00",
	} {
		if got := page.Find(sel).Text(); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want it to say %q", sel, strings.Join(strings.Fields(got), " "), want)
		}
	}
	if page.Find(`[data-testid="resolve-form"] input[name="_csrf"]`).Length() != 1 || page.Find(`[data-testid="give-back-form"] input[name="_csrf"]`).Length() != 1 {
		t.Errorf("the resolve and give-back forms lack the CSRF token")
	}
	if got := state(); got["state"] != "taken" || got["by"] != agent.Name {
		t.Errorf("once taken the API says %v", got)
	}

	if res := c.post(handoffPath(id, "resolve"), url.Values{"note": {"Refunded."}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("resolve without the CSRF token: %d, want 403", res.StatusCode)
	}
	if got := c.post(handoffPath(id, "resolve"), url.Values{"_csrf": {tok}, "note": {" "}}).doc(t).Find(`[data-testid="error-summary"]`).Text(); !strings.Contains(got, "Say what you did") {
		t.Errorf("resolving without a note says %q, want what to write", got)
	}
	if res := c.post(handoffPath(id, "resolve"), url.Values{"_csrf": {tok}, "note": {"Refunded $7.00 by phone."}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("resolve: %d %s", res.StatusCode, res.body)
	}
	page = c.get(handoffPath(id, "")).doc(t)
	if got := page.Find(`[data-testid="handoff-state"]`).Text(); !strings.Contains(got, "Resolved by "+agent.Name) || !strings.Contains(got, "Refunded $7.00 by phone.") {
		t.Errorf("after resolving the page says %q", strings.Join(strings.Fields(got), " "))
	}
	if page.Find(`[data-testid="resolve"]`).Length() != 0 {
		t.Errorf("a resolved hand-off still offers Resolve")
	}

	m := b.client(t)
	m.mustSignIn(manager)
	if got := m.post(handoffPath(id, "resolve"), url.Values{"_csrf": {m.csrf("/handoffs")}, "note": {"Me too."}}).doc(t).Find(`[data-testid="error-summary"]`).Text(); !strings.Contains(got, "over already") {
		t.Errorf("the second person to resolve is told %q, want that it is over already", got)
	}
	if n, err := b.store.CountEvents(ctx, "handoff.resolved", nil); err != nil || n != 1 {
		t.Errorf("handoff.resolved events = %d (%v), want 1", n, err)
	}

	api := b.call(t, b.key, http.MethodGet, "/api/v1/conversations/conv-1", nil).want(t, http.StatusOK)
	if h := api.json["handoff"].(map[string]any); h["state"] != "resolved" || h["by"] != agent.Name || h["note"] != "Refunded $7.00 by phone." {
		t.Errorf("the API says %v, want resolved by %s with the note", h, agent.Name)
	}
	b.deliverWebhooks(t)
	var told []webhooks.Payload
	for _, p := range posts() {
		if strings.HasPrefix(p.Event, "handoff.") {
			told = append(told, p)
		}
	}
	if len(told) != 1 || told[0].Event != "handoff.resolved" {
		t.Fatalf("hand-off webhooks %+v, want one handoff.resolved", told)
	}
	var got map[string]any
	if err := json.Unmarshal(told[0].Conversation, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(api.json, got); diff != "" {
		t.Errorf("the webhook's conversation differs from the API's (-api +webhook):\n%s", diff)
	}
}

func handoffPath(id int64, action string) string {
	p := fmt.Sprintf("/handoffs/%d", id)
	if action != "" {
		p += "/" + action
	}
	return p
}

// TestHandoffCountsAgreeOnHomeTasksAndTheList counts one unit everywhere:
// conversations waiting for a person, however often each handed off and
// whether or not it has a task. The list names the customer, says the
// target and puts those over it first, marked; a hand-off without a
// summary still says what the customer wanted.
func TestHandoffCountsAgreeOnHomeTasksAndTheList(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	now := b.clock.Now()
	for i := range 3 {
		insertHandoff(t, b, f.task.ConversationID, f.task.ID, "transactional_high", fmt.Sprintf(`{"summary":"Refund, try %d."}`, i), now.Add(-time.Duration(50-i)*time.Minute))
	}
	for range 2 {
		insertHandoff(t, b, "conv-no-task", "", "ambiguous", `{}`, now.Add(-30*time.Minute))
	}
	fresh := insertHandoff(t, b, "conv-fresh", "", "informational", `{"summary":"A question."}`, now.Add(-2*time.Minute))
	taken := insertHandoff(t, b, "conv-taken", "", "informational", `{"summary":"Another."}`, now.Add(-time.Hour))

	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	c.post(handoffPath(taken, "take"), url.Values{"_csrf": {c.csrf("/handoffs")}})

	const want = "3" // f.task's conversation, conv-no-task, conv-fresh
	home := c.get("/").doc(t).Find(`[data-testid="waiting-handoffs"]`).AttrOr("data-count", "")
	tasks := filterCount(c.get("/tasks").doc(t), "need-handoff")
	doc := c.get("/handoffs").doc(t)
	list := filterCount(doc, "status-waiting")
	if home != want || tasks != want || list != want {
		t.Errorf("waiting hand-offs: home %s, tasks %s, hand-offs list %s; want %s on each (conversations)", home, tasks, list, want)
	}
	if href := c.get("/tasks").doc(t).Find(`[data-testid="need-handoff"] a`).AttrOr("href", c.get("/tasks").doc(t).Find(`[data-testid="need-handoff"]`).AttrOr("href", "")); !strings.HasPrefix(href, "/handoffs") {
		t.Errorf("the task list's hand-off count leads to %q, want the hand-off list", href)
	}

	if got := doc.Find(`[data-testid="handoff-target"]`).Text(); !strings.Contains(got, "within 15 min") || !strings.Contains(got, "2 over the target") {
		t.Errorf("the target line says %q", strings.Join(strings.Fields(got), " "))
	}
	cards := rowIDs(doc, `article[data-testid^="handoff-"]`)
	if len(cards) != 4 || cards[2] != fmt.Sprint("handoff-", fresh) {
		t.Fatalf("cards %v: want the two over the target first, then the fresh one, then the taken one", cards)
	}
	first := doc.Find(`article[data-testid^="handoff-"]`).First()
	if got := first.Find(`[data-testid="handoff-waiting"]`).Text(); !strings.Contains(got, "Over target") {
		t.Errorf("the longest waiting card is not marked over the target: %q", got)
	}
	if got := first.Find(`[data-testid="handoff-customer"]`).Text(); !strings.Contains(got, f.cust.Email) {
		t.Errorf("the card does not name the customer: %q", got)
	}
	if got := first.Find(`[data-testid="handoff-times"]`).Text(); !strings.Contains(got, "3 times") {
		t.Errorf("the conversation's three hand-offs are not one card: %q", got)
	}
	second := doc.Find(`article[data-testid^="handoff-"]`).Eq(1)
	if got := second.Find(`[data-testid="handoff-summary"]`).Text(); !strings.Contains(got, "Unclear what the customer wants") {
		t.Errorf("a card without a summary says %q, want what the customer wanted", got)
	}
	if n := doc.Find(`[data-testid="handoff-` + fmt.Sprint(fresh) + `"] [data-testid="handoff-waiting"]`).Text(); strings.Contains(n, "Over target") {
		t.Errorf("a hand-off two minutes old is marked over the target")
	}
}

// TestHandoffPagesAreForStaffOnly: a customer gets no hand-off page.
func TestHandoffPagesAreForStaffOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	id := insertHandoff(t, b, "conv-staff", "", "informational", `{"summary":"A question."}`, b.clock.Now())
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Customer])
	if res := c.get(handoffPath(id, "")); res.StatusCode != http.StatusForbidden {
		t.Errorf("a customer opening a hand-off: %d, want 403", res.StatusCode)
	}
	a := b.client(t)
	a.mustSignIn(b.users[accounts.Agent])
	if res := a.get(handoffPath(id+1000, "")); res.StatusCode != http.StatusNotFound || !strings.Contains(res.body, "No such hand-off") {
		t.Errorf("a missing hand-off: %d, want 404 in words", res.StatusCode)
	}
}

// TestGivingAHandoffBackTellsTheAssistantWhatToDo: the holder discards the
// draft (nothing is proposed) and gives the conversation back with a note;
// the assistant reads given_back and the note.
func TestGivingAHandoffBackTellsTheAssistantWhatToDo(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	order := b.damagedOrder(t)
	ho := b.call(t, b.key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "ambiguous", "mode": "handed_off",
		"task_id": b.taskID(), "summary": "Two orders match; which one?", "would_propose": map[string]any{"action": "issue_refund", "args": refundArgs(order, 700)}}).
		want(t, http.StatusCreated)
	id := int64(ho.json["id"].(float64))
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	tok := c.csrf("/handoffs")
	c.post(handoffPath(id, "draft/discard"), url.Values{"_csrf": {tok}})
	if got := c.get(handoffPath(id, "")).doc(t).Find(`[data-testid="flash"]`).Text(); !strings.Contains(got, "Take the conversation first") {
		t.Errorf("discarding before taking says %q", got)
	}
	c.post(handoffPath(id, "take"), url.Values{"_csrf": {tok}})
	c.submitPageForm(t, handoffPath(id, ""), `[data-testid="handoff-draft"] form[action$="/draft/discard"]`)
	page := c.get(handoffPath(id, "")).doc(t)
	if page.Find(`[data-testid="draft-discarded"]`).Length() != 1 || page.Find(`[data-testid="draft-send"]`).Length() != 0 {
		t.Errorf("after Discard the draft is not marked discarded, or can still be sent")
	}
	if n, err := b.store.CountEvents(context.Background(), "invocation.proposed", nil); err != nil || n != 0 {
		t.Errorf("discarding proposed %d requests (%v)", n, err)
	}
	c.post(handoffPath(id, "give-back"), url.Values{"_csrf": {tok}, "note": {"Ask which order: A (walnut lamp) or B (desk lamp)."}})
	if got := c.get(handoffPath(id, "")).doc(t).Find(`[data-testid="handoff-state"]`).Text(); !strings.Contains(got, "Given back to the assistant by") {
		t.Errorf("after giving back the page says %q", strings.Join(strings.Fields(got), " "))
	}
	res := b.call(t, b.key, http.MethodGet, "/api/v1/conversations/conv-1", nil).want(t, http.StatusOK)
	if h := res.json["handoff"].(map[string]any); h["state"] != "given_back" || !strings.Contains(h["note"].(string), "Ask which order") {
		t.Errorf("the API says %v, want given_back with the note", h)
	}
}
