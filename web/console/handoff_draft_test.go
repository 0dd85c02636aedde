package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"

	"countersign/internal/accounts"
)

// pageForm reads the form selector finds on the page at path: where it
// posts and every hidden field it carries, as a browser would send it.
func pageForm(t *testing.T, c *webtest.Client, path, selector string) (string, url.Values) {
	t.Helper()
	form := c.Get(path).Doc(t).Find(selector).First()
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
func submitPageForm(t *testing.T, c *webtest.Client, path, selector string) webtest.Response {
	t.Helper()
	action, values := pageForm(t, c, path, selector)
	return c.Post(action, values)
}

func flashOf(t *testing.T, c *webtest.Client, path string) string {
	t.Helper()
	return strings.Join(strings.Fields(c.Get(path).Doc(t).Find(`[data-testid="flash"]`).Text()), " ")
}

const (
	sendForm    = `[data-testid="handoff-draft"] form[action$="/draft/send"]`
	discardForm = `[data-testid="handoff-draft"] form[action$="/draft/discard"]`
)

func handOffDraft(t *testing.T, b *webtest.Stack, summary, order string, cents int) int64 {
	t.Helper()
	r := b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off",
		"task_id": b.TaskID(), "summary": summary, "would_propose": map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, cents)}}).
		Want(t, http.StatusCreated)
	return int64(r.JSON["id"].(float64))
}

// The page shows the conversation's latest hand-off's draft; Send it on
// proposes exactly that one, and a page opened before the assistant handed
// off again sends nothing.
func TestTheHandoffDraftSentIsTheDraftShown(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	first := handOffDraft(t, b, "Wants $25.00 back.", order, 2500)
	handOffDraft(t, b, "Customer agreed to a small goodwill refund of $1.00.", order, 100)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	take, values := pageForm(t, c, "/handoffs", `form[action$="/take"]`)
	c.Post(take, values)
	page := c.Get(webtest.HandoffPath(first, "")).Doc(t)
	if shown := page.Find(`[data-testid="handoff-draft"]`).Text(); !strings.Contains(shown, "$1.00") || strings.Contains(shown, "$25.00") {
		t.Fatalf("the page shows the draft %q, want the latest ($1.00)", shown)
	}
	// The assistant hands off again after the page was read.
	action, stale := pageForm(t, c, webtest.HandoffPath(first, ""), sendForm)
	handOffDraft(t, b, "Now wants $3.00.", order, 300)
	c.Post(action, stale)
	if got := flashOf(t, c, webtest.HandoffPath(first, "")); !strings.Contains(got, "handed off again since you opened this page") {
		t.Errorf("a send from a page read before the next hand-off says %q", got)
	}
	invs, err := b.Control.Invocations(context.Background(), b.TaskID())
	if err != nil || len(invs) != 0 {
		t.Fatalf("a page no longer current proposed %d requests (%v)", len(invs), err)
	}
	submitPageForm(t, c, webtest.HandoffPath(first, ""), sendForm)
	invs, err = b.Control.Invocations(context.Background(), b.TaskID())
	if err != nil || len(invs) != 1 || *invs[0].AmountCents != 300 {
		t.Fatalf("sending the draft shown proposed %d requests (%v), want one of $3.00", len(invs), err)
	}
	if page := c.Get(webtest.HandoffPath(first, "")).Doc(t); page.Find(`[data-testid="draft-send"]`).Length() != 0 ||
		page.Find(`[data-testid="draft-sent"]`).Length() != 1 {
		t.Errorf("after sending, the draft is not marked sent, or is still offered")
	}
}

// A discarded draft is never sent, and a sent one is sent once, whatever
// the forms replayed.
func TestAHandoffDraftIsSentOnceAndNeverAfterDiscard(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	id := handOffDraft(t, b, "Wants $7.00 back.", order, 700)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	c.Post(webtest.HandoffPath(id, "take"), url.Values{"_csrf": {c.CSRF("/handoffs")}})
	action, send := pageForm(t, c, webtest.HandoffPath(id, ""), sendForm)
	submitPageForm(t, c, webtest.HandoffPath(id, ""), discardForm)
	c.Post(action, send)
	if got := flashOf(t, c, webtest.HandoffPath(id, "")); !strings.Contains(got, "discarded") {
		t.Errorf("sending after discarding says %q", got)
	}
	if invs, _ := b.Control.Invocations(context.Background(), b.TaskID()); len(invs) != 0 {
		t.Fatalf("a discarded draft became %d requests", len(invs))
	}

	// The next round's draft, sent, then its form replayed past the
	// duplicate window.
	c.Post(webtest.HandoffPath(id, "give-back"), url.Values{"_csrf": {send.Get("_csrf")}, "note": {"Ask them again."}})
	next := handOffDraft(t, b, "Wants $6.00 back.", order, 600)
	c.Post(webtest.HandoffPath(next, "take"), url.Values{"_csrf": {send.Get("_csrf")}})
	action, send = pageForm(t, c, webtest.HandoffPath(next, ""), sendForm)
	c.Post(action, send)
	b.Clock.Advance(11 * time.Minute)
	c.Post(action, send)
	if got := flashOf(t, c, webtest.HandoffPath(next, "")); !strings.Contains(got, "sent on already") {
		t.Errorf("sending twice says %q", got)
	}
	if invs, _ := b.Control.Invocations(context.Background(), b.TaskID()); len(invs) != 1 {
		t.Errorf("a draft sent twice became %d requests, want 1", len(invs))
	}
}

// A form of an older round (a replayed resolve, an old draft) does not act
// on the conversation's new round.
func TestAnOldHandoffIDDoesNotActOnTheNewRound(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	old := handOffDraft(t, b, "Refund $40.", order, 4000)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	tok := c.CSRF("/handoffs")
	c.Post(webtest.HandoffPath(old, "take"), url.Values{"_csrf": {tok}})
	oldSend, oldValues := pageForm(t, c, webtest.HandoffPath(old, ""), sendForm)
	submitPageForm(t, c, webtest.HandoffPath(old, ""), discardForm)
	c.Post(webtest.HandoffPath(old, "give-back"), url.Values{"_csrf": {tok}, "note": {"Only $5 is fine; ask them."}})
	fresh := handOffDraft(t, b, "Customer now asks about a second, unrelated problem.", order, 500)
	c.Post(webtest.HandoffPath(fresh, "take"), url.Values{"_csrf": {tok}})
	c.Post(oldSend, oldValues)
	c.Post(webtest.HandoffPath(old, "draft/send"), url.Values{"_csrf": {tok}})
	if invs, _ := b.Control.Invocations(context.Background(), b.TaskID()); len(invs) != 0 {
		t.Errorf("the old round's discarded $40 draft was proposed from its old id (%d requests)", len(invs))
	}
	// Refused, the page comes back (422) led by its error summary, the
	// typed note kept.
	res := c.Post(webtest.HandoffPath(old, "resolve"), url.Values{"_csrf": {tok}, "note": {"Refunded $40 by phone."}})
	if summary := strings.TrimSpace(res.Doc(t).Find(`[data-testid="error-summary"]`).Text()); res.StatusCode != http.StatusUnprocessableEntity ||
		!strings.Contains(summary, "handed off again") || !strings.Contains(res.Text, "Refunded $40 by phone.") {
		t.Errorf("a resolve posted to the old id answers %d with the summary %q", res.StatusCode, summary)
	}
	var open int
	if err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM handoffs_open WHERE conversation_event_id = $1`, fresh).Scan(&open); err != nil || open != 1 {
		t.Errorf("a resolve posted to the old id closed the new round (%v)", err)
	}
	if action, _ := pageForm(t, c, webtest.HandoffPath(old, ""), `[data-testid="resolve-form"]`); action != webtest.HandoffPath(fresh, "resolve") {
		t.Errorf("the page's resolve form posts to %s, want the round it shows (%d)", action, fresh)
	}
}

// An event names a task of its own conversation only, and the page names
// the customer the draft is sent for.
func TestAHandoffActsForItsOwnConversationsCustomer(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	order := b.DamagedOrder(t)
	other := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "someone.else@example.test",
		"conversation_id": "conv-2", "allowed_actions": []string{"issue_refund"}, "write_budget": 10, "inflight_limit": 3, "rate_per_minute": 30}).Want(t, http.StatusCreated)
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "transactional_high", "mode": "handed_off",
		"task_id": other.JSON["id"], "summary": "Refund.", "would_propose": map[string]any{"action": "issue_refund", "args": webtest.RefundArgs(order, 700)}})
	if res.Status == http.StatusCreated || !strings.Contains(res.Body, "another conversation") {
		t.Errorf("a hand-off in conv-1 naming conv-2's task: %d %s, want refused", res.Status, res.Body)
	}
	// A second task of the conversation, for another customer: the page
	// names the hand-off's, which the draft is sent on, not the one a
	// later event named.
	second := b.Call(t, b.Key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "someone.else@example.test",
		"conversation_id": "conv-1", "allowed_actions": []string{"issue_refund"}, "write_budget": 10, "inflight_limit": 3, "rate_per_minute": 30}).Want(t, http.StatusCreated)
	id := handOffDraft(t, b, "Refund.", order, 700)
	b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", map[string]any{"intent": "informational", "mode": "answered",
		"task_id": second.JSON["id"]}).Want(t, http.StatusCreated)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	c.Post(webtest.HandoffPath(id, "take"), url.Values{"_csrf": {c.CSRF("/handoffs")}})
	page := c.Get(webtest.HandoffPath(id, "")).Doc(t)
	if got := strings.TrimSpace(page.Find(`[data-testid="customer-ref"]`).Text()); got != "customer@demo.countersign.test" {
		t.Errorf("the page names customer %q, want the hand-off task's", got)
	}
	if got := page.Find(`[data-testid="draft-for"]`).Text(); !strings.Contains(got, b.TaskID()) {
		t.Errorf("the draft says %q, want the task it is sent on (%s)", got, b.TaskID())
	}
	submitPageForm(t, c, webtest.HandoffPath(id, ""), sendForm)
	if invs, _ := b.Control.Invocations(context.Background(), b.TaskID()); len(invs) != 1 {
		t.Errorf("the draft was not proposed on the task the page named (%d)", len(invs))
	}
}

// What the assistant wrote is shown with its hidden characters marked.
func TestTheHandoffPageShowsTheAssistantsHiddenCharacters(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	id := webtest.InsertHandoff(t, b, "conv-hidden", "", "transactional_high",
		`{"summary": "Refund approved\u200b by the manager", "facts": ["order\u202eA"], "would_propose": {"action": "issue_refund", "args": {"reason_code": "dam\u200baged"}}}`,
		b.Clock.Now())
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	for _, path := range []string{webtest.HandoffPath(id, ""), "/handoffs"} {
		main := c.Get(path).Doc(t).Find("main")
		if html, _ := main.Html(); strings.Contains(html, "\u200b") || strings.Contains(html, "\u202e") {
			t.Errorf("%s shows the assistant's hidden characters raw", path)
		}
		if txt := main.Text(); !strings.Contains(txt, "U+200B") || !strings.Contains(txt, "U+202E") {
			t.Errorf("%s does not mark the hidden characters", path)
		}
	}
}
