package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/store/dbtest"
	"countersign/web/webtest"

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
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	ctx := context.Background()
	posts := b.ReceiveWebhooks(t)

	order := b.DamagedOrder(t)
	b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "ambiguous", "mode": "answered",
		"task_id": b.TaskID()}).Want(t, http.StatusCreated)
	ho := b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off",
		"task_id": b.TaskID(), "summary": "Wants a refund for the walnut lamp; says it arrived cracked.", "facts": map[string]any{"order": order},
		"would_propose": map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 700)}}).Want(t, http.StatusCreated)
	id := int64(ho.JSON["id"].(float64))
	state := func() map[string]any {
		t.Helper()
		res := b.Call(t, b.Key, http.MethodGet, "/api/v1/conversations/conv-1", nil).Want(t, http.StatusOK)
		h, _ := res.JSON["handoff"].(map[string]any)
		return h
	}
	if got := state(); got["state"] != "waiting" || got["id"] != float64(id) {
		t.Fatalf("before anyone took it the API says %v, want waiting", got)
	}
	other, otherKey := b.NewAssistant(t, "other-bot")
	_ = other
	b.Call(t, otherKey, http.MethodGet, "/api/v1/conversations/conv-1", nil).Want(t, http.StatusNotFound)

	agent, manager := b.Users[accounts.Agent], b.Users[accounts.Manager]
	c := b.Client(t)
	c.MustSignIn(agent)
	tok := c.CSRF("/handoffs")
	card := c.Get("/handoffs").Doc(t).Find(fmt.Sprintf(`[data-testid="handoff-%d"]`, id))
	if got := card.Find(`[data-testid="handoff-customer"]`).Text(); !strings.Contains(got, "customer@demo.countersign.test") {
		t.Errorf("the card does not name the customer: %q", got)
	}
	res := c.Post(webtest.HandoffPath(id, "take"), url.Values{"_csrf": {tok}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != webtest.HandoffPath(id, "") {
		t.Fatalf("take: %d to %q, want 303 to the hand-off's page", res.StatusCode, res.Header.Get("Location"))
	}
	page := c.Get(webtest.HandoffPath(id, "")).Doc(t)
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

	if res := c.Post(webtest.HandoffPath(id, "resolve"), url.Values{"note": {"Refunded."}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("resolve without the CSRF token: %d, want 403", res.StatusCode)
	}
	if got := c.Post(webtest.HandoffPath(id, "resolve"), url.Values{"_csrf": {tok}, "note": {" "}}).Doc(t).Find(`[data-testid="error-summary"]`).Text(); !strings.Contains(got, "Say what you did") {
		t.Errorf("resolving without a note says %q, want what to write", got)
	}
	if res := c.Post(webtest.HandoffPath(id, "resolve"), url.Values{"_csrf": {tok}, "note": {"Refunded $7.00 by phone."}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("resolve: %d %s", res.StatusCode, res.Text)
	}
	page = c.Get(webtest.HandoffPath(id, "")).Doc(t)
	if got := page.Find(`[data-testid="handoff-state"]`).Text(); !strings.Contains(got, "Resolved by "+agent.Name) || !strings.Contains(got, "Refunded $7.00 by phone.") {
		t.Errorf("after resolving the page says %q", strings.Join(strings.Fields(got), " "))
	}
	if page.Find(`[data-testid="resolve"]`).Length() != 0 {
		t.Errorf("a resolved hand-off still offers Resolve")
	}

	m := b.Client(t)
	m.MustSignIn(manager)
	if got := m.Post(webtest.HandoffPath(id, "resolve"), url.Values{"_csrf": {m.CSRF("/handoffs")}, "note": {"Me too."}}).Doc(t).Find(`[data-testid="error-summary"]`).Text(); !strings.Contains(got, "over already") {
		t.Errorf("the second person to resolve is told %q, want that it is over already", got)
	}
	if n, err := dbtest.CountEvents(ctx, b.Store.Pool(), "handoff.resolved", nil); err != nil || n != 1 {
		t.Errorf("handoff.resolved events = %d (%v), want 1", n, err)
	}

	api := b.Call(t, b.Key, http.MethodGet, "/api/v1/conversations/conv-1", nil).Want(t, http.StatusOK)
	if h := api.JSON["handoff"].(map[string]any); h["state"] != "resolved" || h["by"] != agent.Name || h["note"] != "Refunded $7.00 by phone." {
		t.Errorf("the API says %v, want resolved by %s with the note", h, agent.Name)
	}
	b.DeliverWebhooks(t)
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
	if diff := cmp.Diff(api.JSON, got); diff != "" {
		t.Errorf("the webhook's conversation differs from the API's (-api +webhook):\n%s", diff)
	}
}

// TestHandoffCountsAgreeOnHomeTasksAndTheList counts one unit everywhere:
// conversations waiting for a person, however often each handed off and
// whether or not it has a task. The list names the customer, says the
// target and puts those over it first, marked; a hand-off without a
// summary still says what the customer wanted.
func TestHandoffCountsAgreeOnHomeTasksAndTheList(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	now := b.Clock.Now()
	for i := range 3 {
		webtest.InsertHandoff(t, b, f.Task.ConversationID, f.Task.ID, "transactional_high", fmt.Sprintf(`{"summary":"Refund, try %d."}`, i), now.Add(-time.Duration(50-i)*time.Minute))
	}
	for range 2 {
		webtest.InsertHandoff(t, b, "conv-no-task", "", "ambiguous", `{}`, now.Add(-30*time.Minute))
	}
	fresh := webtest.InsertHandoff(t, b, "conv-fresh", "", "informational", `{"summary":"A question."}`, now.Add(-2*time.Minute))
	taken := webtest.InsertHandoff(t, b, "conv-taken", "", "informational", `{"summary":"Another."}`, now.Add(-time.Hour))

	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	c.Post(webtest.HandoffPath(taken, "take"), url.Values{"_csrf": {c.CSRF("/handoffs")}})

	const want = "3" // f.task's conversation, conv-no-task, conv-fresh
	home := c.Get("/").Doc(t).Find(`[data-testid="waiting-handoffs"]`).AttrOr("data-count", "")
	tasks := filterCount(c.Get("/tasks").Doc(t), "need-handoff")
	doc := c.Get("/handoffs").Doc(t)
	list := filterCount(doc, "status-waiting")
	if home != want || tasks != want || list != want {
		t.Errorf("waiting hand-offs: home %s, tasks %s, hand-offs list %s; want %s on each (conversations)", home, tasks, list, want)
	}
	if href := c.Get("/tasks").Doc(t).Find(`[data-testid="need-handoff"] a`).AttrOr("href", c.Get("/tasks").Doc(t).Find(`[data-testid="need-handoff"]`).AttrOr("href", "")); !strings.HasPrefix(href, "/handoffs") {
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
	if got := first.Find(`[data-testid="handoff-customer"]`).Text(); !strings.Contains(got, f.Customer.Email) {
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
	b := webtest.New(t, webtest.WithShop())
	id := webtest.InsertHandoff(t, b, "conv-staff", "", "informational", `{"summary":"A question."}`, b.Clock.Now())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Customer])
	if res := c.Get(webtest.HandoffPath(id, "")); res.StatusCode != http.StatusForbidden {
		t.Errorf("a customer opening a hand-off: %d, want 403", res.StatusCode)
	}
	a := b.Client(t)
	a.MustSignIn(b.Users[accounts.Agent])
	if res := a.Get(webtest.HandoffPath(id+1000, "")); res.StatusCode != http.StatusNotFound || !strings.Contains(res.Text, "No such hand-off") {
		t.Errorf("a missing hand-off: %d, want 404 in words", res.StatusCode)
	}
}

// TestGivingAHandoffBackTellsTheAssistantWhatToDo: the holder discards the
// draft (nothing is proposed) and gives the conversation back with a note;
// the assistant reads given_back and the note.
func TestGivingAHandoffBackTellsTheAssistantWhatToDo(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	ho := b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "ambiguous", "mode": "handed_off",
		"task_id": b.TaskID(), "summary": "Two orders match; which one?", "would_propose": map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 700)}}).
		Want(t, http.StatusCreated)
	id := int64(ho.JSON["id"].(float64))
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	tok := c.CSRF("/handoffs")
	c.Post(webtest.HandoffPath(id, "draft/discard"), url.Values{"_csrf": {tok}})
	if got := c.Get(webtest.HandoffPath(id, "")).Doc(t).Find(`[data-testid="flash"]`).Text(); !strings.Contains(got, "Take the conversation first") {
		t.Errorf("discarding before taking says %q", got)
	}
	c.Post(webtest.HandoffPath(id, "take"), url.Values{"_csrf": {tok}})
	submitPageForm(t, c, webtest.HandoffPath(id, ""), `[data-testid="handoff-draft"] form[action$="/draft/discard"]`)
	page := c.Get(webtest.HandoffPath(id, "")).Doc(t)
	if page.Find(`[data-testid="draft-discarded"]`).Length() != 1 || page.Find(`[data-testid="draft-send"]`).Length() != 0 {
		t.Errorf("after Discard the draft is not marked discarded, or can still be sent")
	}
	if n, err := dbtest.CountEvents(context.Background(), b.Store.Pool(), "invocation.proposed", nil); err != nil || n != 0 {
		t.Errorf("discarding proposed %d requests (%v)", n, err)
	}
	c.Post(webtest.HandoffPath(id, "give-back"), url.Values{"_csrf": {tok}, "note": {"Ask which order: A (walnut lamp) or B (desk lamp)."}})
	if got := c.Get(webtest.HandoffPath(id, "")).Doc(t).Find(`[data-testid="handoff-state"]`).Text(); !strings.Contains(got, "Given back to the assistant by") {
		t.Errorf("after giving back the page says %q", strings.Join(strings.Fields(got), " "))
	}
	res := b.Call(t, b.Key, http.MethodGet, "/api/v1/conversations/conv-1", nil).Want(t, http.StatusOK)
	if h := res.JSON["handoff"].(map[string]any); h["state"] != "given_back" || !strings.Contains(h["note"].(string), "Ask which order") {
		t.Errorf("the API says %v, want given_back with the note", h)
	}
}
