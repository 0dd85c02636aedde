package console_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

// insertHandoffBy records a hand-off of a conversation by an assistant
// (added when missing), at a time, as insertHandoff does for asst_h.
func insertHandoffBy(t *testing.T, b *webtest.Stack, assistantID, name, conversation string, at time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	if _, err := b.Store.Pool().Exec(ctx, `INSERT INTO assistants (id, name, created_at) VALUES ($1, $2, now()) ON CONFLICT DO NOTHING`,
		assistantID, name); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := b.Store.Pool().QueryRow(ctx, `INSERT INTO conversation_events (conversation_id, assistant_id, intent, mode, at, data)
		VALUES ($1, $2, 'ambiguous', 'handed_off', $3, '{"summary":"Needs a person."}') RETURNING id`, conversation, assistantID, at).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestMadeUpHandoffsDoNotFillThePeoplesQueue is issue 32's finding: 50
// hand-offs of made-up conversations from one key all answered 201 and
// "Waiting for a person" grew by 50. Each is now refused, naming the
// field and the fix; 50 of a conversation with a task are one card.
func TestMadeUpHandoffsDoNotFillThePeoplesQueue(t *testing.T) {
	t.Parallel()
	ab := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	c := ab.Client(t)
	c.MustSignIn(ab.Users[accounts.Agent])
	waiting := func() (list, home string) {
		return filterCount(c.Get("/handoffs").Doc(t), "status-waiting"),
			c.Get("/").Doc(t).Find(`[data-testid="waiting-handoffs"]`).AttrOr("data-count", "")
	}
	list, home := waiting()
	event := map[string]any{"intent": "transactional_high", "mode": "handed_off", "summary": "Wants a person now."}
	refused := 0
	for i := range 50 {
		res := ab.Call(t, ab.Key, http.MethodPost, fmt.Sprintf("/api/v1/conversations/made-up-%d/events", i), event)
		fields, _ := res.JSON["fields"].(map[string]any)
		fix, _ := fields["conversation_id"].(string)
		if res.Status == http.StatusUnprocessableEntity && res.JSON["code"] == "handoff_needs_task" &&
			strings.Contains(fix, "open a task for this conversation first") {
			refused++
		} else if i == 0 {
			t.Errorf("a made-up conversation's hand-off: %d %s", res.Status, res.Body)
		}
	}
	for range 50 {
		ab.Call(t, ab.Key, http.MethodPost, "/api/v1/conversations/conv-1/events", event).Want(t, http.StatusCreated)
	}
	list2, home2 := waiting()
	t.Logf("50 made-up hand-offs: %d refused; waiting for a person %s → %s (home %s → %s)", refused, list, list2, home, home2)
	if refused != 50 || list != "0" || list2 != "1" || home2 != "1" {
		t.Errorf("%d of 50 made-up hand-offs refused; waiting %s → %s (home %s), want all refused and 0 → 1 (conv-1's round)",
			refused, list, list2, home2)
	}
}

// TestTheHandoffListTakesEachAssistantInTurn: one assistant's flood of 60
// older hand-offs does not keep another's newer customer behind it — the
// list takes each assistant's in turn — the alarm names the flooding
// assistant, paging still shows each conversation once, and the counts
// agree everywhere.
func TestTheHandoffListTakesEachAssistantInTurn(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	now := b.Clock.Now()
	quiet := insertHandoffBy(t, b, "asst_quiet", "Quiet bot", "quiet-0", now.Add(-time.Minute))
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Agent])
	if alarm := c.Get("/handoffs").Doc(t).Find(`[data-testid="handoff-flood"]`); alarm.Length() != 0 {
		t.Errorf("one conversation waiting raises a flood alarm: %q", alarm.Text())
	}
	for i := range 60 {
		insertHandoffBy(t, b, "asst_flood", "Flood bot", fmt.Sprint("flood-", i), now.Add(-time.Duration(90-i)*time.Minute))
	}

	doc := c.Get("/handoffs").Doc(t)
	cards := rowIDs(doc, `article[data-testid^="handoff-"]`)
	at := slices.Index(cards, fmt.Sprint("handoff-", quiet))
	t.Logf("the quiet assistant's newer conversation is card %d of the first page (%d cards)", at+1, len(cards))
	if at < 0 || at > 1 {
		t.Errorf("the quiet assistant's conversation is card %d of the first page, want one of the first two", at+1)
	}
	alarm := strings.Join(strings.Fields(doc.Find(`[data-testid="handoff-flood"]`).Text()), " ")
	if !strings.Contains(alarm, "Flood bot handed off 60 of the 61 conversations waiting") {
		t.Errorf("the alarm says %q, want it to name Flood bot with 60 of 61", alarm)
	}
	next := doc.Find(`[data-testid="handoff-pager"] [data-testid="next-page"]`).AttrOr("href", "")
	if next == "" {
		t.Fatal("no next page after 50 of 61")
	}
	page2 := c.Get(next).Doc(t)
	if got := page2.Find(`[data-testid="handoff-pager"] [data-testid="showing"]`).Text(); got != "Showing 51–61 of 61 conversations." {
		t.Errorf("the second page says %q", got)
	}
	all := append(cards, rowIDs(page2, `article[data-testid^="handoff-"]`)...)
	seen := map[string]bool{}
	for _, id := range all {
		seen[id] = true
	}
	if len(all) != 61 || len(seen) != 61 {
		t.Errorf("two pages show %d cards (%d different), want each of the 61 once", len(all), len(seen))
	}
	home := c.Get("/").Doc(t).Find(`[data-testid="waiting-handoffs"]`).AttrOr("data-count", "")
	tasks := filterCount(c.Get("/tasks").Doc(t), "need-handoff")
	if list := filterCount(doc, "status-waiting"); home != "61" || tasks != "61" || list != "61" {
		t.Errorf("waiting: home %s, tasks %s, list %s; want 61 on each", home, tasks, list)
	}
}
