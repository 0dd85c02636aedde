package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
)

// pageForm reads the form selector finds on the page at path: where it
// posts and every hidden field it carries, as a browser would send it.
func (c *client) pageForm(t *testing.T, path, selector string) (string, url.Values) {
	t.Helper()
	form := c.get(path).doc(t).Find(selector).First()
	action, ok := form.Attr("action")
	if !ok {
		t.Fatalf("no form %s on %s", selector, path)
	}
	values := url.Values{}
	form.Find(`input[type="hidden"]`).Each(func(_ int, in *goquery.Selection) {
		name, _ := in.Attr("name")
		value, _ := in.Attr("value")
		values.Set(name, value)
	})
	return action, values
}

// submitPageForm submits the form selector finds on the page at path.
func (c *client) submitPageForm(t *testing.T, path, selector string) response {
	t.Helper()
	action, values := c.pageForm(t, path, selector)
	return c.post(action, values)
}

func flashOf(t *testing.T, c *client, path string) string {
	t.Helper()
	return strings.Join(strings.Fields(c.get(path).doc(t).Find(`[data-testid="flash"]`).Text()), " ")
}

const (
	sendForm    = `[data-testid="handoff-draft"] form[action$="/draft/send"]`
	discardForm = `[data-testid="handoff-draft"] form[action$="/draft/discard"]`
)

func (b *testBundle) handOffDraft(t *testing.T, summary, order string, cents int) int64 {
	t.Helper()
	r := b.call(t, b.key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off",
		"task_id": b.taskID(), "summary": summary, "would_propose": map[string]any{"action": "issue_refund", "args": refundArgs(order, cents)}}).
		want(t, http.StatusCreated)
	return int64(r.json["id"].(float64))
}

// The page shows the conversation's latest hand-off's draft; Send it on
// proposes exactly that one, and a page opened before the assistant handed
// off again sends nothing.
func TestTheHandoffDraftSentIsTheDraftShown(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	order := b.damagedOrder(t)
	first := b.handOffDraft(t, "Wants $25.00 back.", order, 2500)
	b.handOffDraft(t, "Customer agreed to a small goodwill refund of $1.00.", order, 100)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	take, values := c.pageForm(t, "/handoffs", `form[action$="/take"]`)
	c.post(take, values)
	page := c.get(handoffPath(first, "")).doc(t)
	if shown := page.Find(`[data-testid="handoff-draft"]`).Text(); !strings.Contains(shown, "$1.00") || strings.Contains(shown, "$25.00") {
		t.Fatalf("the page shows the draft %q, want the latest ($1.00)", shown)
	}
	// The assistant hands off again after the page was read.
	action, stale := c.pageForm(t, handoffPath(first, ""), sendForm)
	b.handOffDraft(t, "Now wants $3.00.", order, 300)
	c.post(action, stale)
	if got := flashOf(t, c, handoffPath(first, "")); !strings.Contains(got, "handed off again since you opened this page") {
		t.Errorf("a send from a page read before the next hand-off says %q", got)
	}
	invs, err := b.cp.Invocations(context.Background(), b.taskID())
	if err != nil || len(invs) != 0 {
		t.Fatalf("a page no longer current proposed %d requests (%v)", len(invs), err)
	}
	c.submitPageForm(t, handoffPath(first, ""), sendForm)
	invs, err = b.cp.Invocations(context.Background(), b.taskID())
	if err != nil || len(invs) != 1 || *invs[0].AmountCents != 300 {
		t.Fatalf("sending the draft shown proposed %d requests (%v), want one of $3.00", len(invs), err)
	}
	if page := c.get(handoffPath(first, "")).doc(t); page.Find(`[data-testid="draft-send"]`).Length() != 0 ||
		page.Find(`[data-testid="draft-sent"]`).Length() != 1 {
		t.Errorf("after sending, the draft is not marked sent, or is still offered")
	}
}

// A discarded draft is never sent, and a sent one is sent once, whatever
// the forms replayed.
func TestAHandoffDraftIsSentOnceAndNeverAfterDiscard(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	order := b.damagedOrder(t)
	id := b.handOffDraft(t, "Wants $7.00 back.", order, 700)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	c.post(handoffPath(id, "take"), url.Values{"_csrf": {c.csrf("/handoffs")}})
	action, send := c.pageForm(t, handoffPath(id, ""), sendForm)
	c.submitPageForm(t, handoffPath(id, ""), discardForm)
	c.post(action, send)
	if got := flashOf(t, c, handoffPath(id, "")); !strings.Contains(got, "discarded") {
		t.Errorf("sending after discarding says %q", got)
	}
	if invs, _ := b.cp.Invocations(context.Background(), b.taskID()); len(invs) != 0 {
		t.Fatalf("a discarded draft became %d requests", len(invs))
	}

	// The next round's draft, sent, then its form replayed past the
	// duplicate window.
	c.post(handoffPath(id, "give-back"), url.Values{"_csrf": {send.Get("_csrf")}, "note": {"Ask them again."}})
	next := b.handOffDraft(t, "Wants $6.00 back.", order, 600)
	c.post(handoffPath(next, "take"), url.Values{"_csrf": {send.Get("_csrf")}})
	action, send = c.pageForm(t, handoffPath(next, ""), sendForm)
	c.post(action, send)
	b.clock.Advance(11 * time.Minute)
	c.post(action, send)
	if got := flashOf(t, c, handoffPath(next, "")); !strings.Contains(got, "sent on already") {
		t.Errorf("sending twice says %q", got)
	}
	if invs, _ := b.cp.Invocations(context.Background(), b.taskID()); len(invs) != 1 {
		t.Errorf("a draft sent twice became %d requests, want 1", len(invs))
	}
}

// A form of an older round (a replayed resolve, an old draft) does not act
// on the conversation's new round.
func TestAnOldHandoffIDDoesNotActOnTheNewRound(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	order := b.damagedOrder(t)
	old := b.handOffDraft(t, "Refund $40.", order, 4000)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	tok := c.csrf("/handoffs")
	c.post(handoffPath(old, "take"), url.Values{"_csrf": {tok}})
	oldSend, oldValues := c.pageForm(t, handoffPath(old, ""), sendForm)
	c.submitPageForm(t, handoffPath(old, ""), discardForm)
	c.post(handoffPath(old, "give-back"), url.Values{"_csrf": {tok}, "note": {"Only $5 is fine; ask them."}})
	fresh := b.handOffDraft(t, "Customer now asks about a second, unrelated problem.", order, 500)
	c.post(handoffPath(fresh, "take"), url.Values{"_csrf": {tok}})
	c.post(oldSend, oldValues)
	c.post(handoffPath(old, "draft/send"), url.Values{"_csrf": {tok}})
	if invs, _ := b.cp.Invocations(context.Background(), b.taskID()); len(invs) != 0 {
		t.Errorf("the old round's discarded $40 draft was proposed from its old id (%d requests)", len(invs))
	}
	// Refused, the page comes back (422) led by its error summary, the
	// typed note kept.
	res := c.post(handoffPath(old, "resolve"), url.Values{"_csrf": {tok}, "note": {"Refunded $40 by phone."}})
	if summary := strings.TrimSpace(res.doc(t).Find(`[data-testid="error-summary"]`).Text()); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(summary, "handed off again") || !strings.Contains(res.body, "Refunded $40 by phone.") {
		t.Errorf("a resolve posted to the old id answers %d with the summary %q", res.StatusCode, summary)
	}
	var open int
	if err := b.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM handoffs_open WHERE conversation_event_id = $1`, fresh).Scan(&open); err != nil || open != 1 {
		t.Errorf("a resolve posted to the old id closed the new round (%v)", err)
	}
	if action, _ := c.pageForm(t, handoffPath(old, ""), `[data-testid="resolve-form"]`); action != handoffPath(fresh, "resolve") {
		t.Errorf("the page's resolve form posts to %s, want the round it shows (%d)", action, fresh)
	}
}

// An event names a task of its own conversation only, and the page names
// the customer the draft is sent for.
func TestAHandoffActsForItsOwnConversationsCustomer(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop(), withAssistant())
	order := b.damagedOrder(t)
	other := b.call(t, b.key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "someone.else@example.test",
		"conversation_id": "conv-2", "allowed_actions": []string{"issue_refund"}, "write_budget": 10, "inflight_limit": 3, "rate_per_minute": 30}).want(t, http.StatusCreated)
	res := b.call(t, b.key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off",
		"task_id": other.json["id"], "summary": "Refund.", "would_propose": map[string]any{"action": "issue_refund", "args": refundArgs(order, 700)}})
	if res.status == http.StatusCreated || !strings.Contains(res.body, "another conversation") {
		t.Errorf("a hand-off in conv-1 naming conv-2's task: %d %s, want refused", res.status, res.body)
	}
	// A second task of the conversation, for another customer: the page
	// names the hand-off's, which the draft is sent on, not the one a
	// later event named.
	second := b.call(t, b.key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "someone.else@example.test",
		"conversation_id": "conv-1", "allowed_actions": []string{"issue_refund"}, "write_budget": 10, "inflight_limit": 3, "rate_per_minute": 30}).want(t, http.StatusCreated)
	id := b.handOffDraft(t, "Refund.", order, 700)
	b.call(t, b.key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "informational", "mode": "answered",
		"task_id": second.json["id"]}).want(t, http.StatusCreated)
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	c.post(handoffPath(id, "take"), url.Values{"_csrf": {c.csrf("/handoffs")}})
	page := c.get(handoffPath(id, "")).doc(t)
	if got := strings.TrimSpace(page.Find(`[data-testid="customer-ref"]`).Text()); got != "customer@demo.countersign.test" {
		t.Errorf("the page names customer %q, want the hand-off task's", got)
	}
	if got := page.Find(`[data-testid="draft-for"]`).Text(); !strings.Contains(got, b.taskID()) {
		t.Errorf("the draft says %q, want the task it is sent on (%s)", got, b.taskID())
	}
	c.submitPageForm(t, handoffPath(id, ""), sendForm)
	if invs, _ := b.cp.Invocations(context.Background(), b.taskID()); len(invs) != 1 {
		t.Errorf("the draft was not proposed on the task the page named (%d)", len(invs))
	}
}

// What the assistant wrote is shown with its hidden characters marked.
func TestTheHandoffPageShowsTheAssistantsHiddenCharacters(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	id := insertHandoff(t, b, "conv-hidden", "", "transactional_high",
		`{"summary": "Refund approved\u200b by the manager", "facts": ["order\u202eA"], "would_propose": {"action": "issue_refund", "args": {"reason_code": "dam\u200baged"}}}`,
		b.clock.Now())
	c := b.client(t)
	c.mustSignIn(b.users[accounts.Agent])
	for _, path := range []string{handoffPath(id, ""), "/handoffs"} {
		main := c.get(path).doc(t).Find("main")
		if html, _ := main.Html(); strings.Contains(html, "\u200b") || strings.Contains(html, "\u202e") {
			t.Errorf("%s shows the assistant's hidden characters raw", path)
		}
		if txt := main.Text(); !strings.Contains(txt, "U+200B") || !strings.Contains(txt, "U+202E") {
			t.Errorf("%s does not mark the hidden characters", path)
		}
	}
}
