package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"countersign/internal/accounts"
)

// withoutTaskRow reads an assistant's row of "Reported without a vouched customer":
// its name, conversations and reports; empty when it has none.
func withoutTaskRow(doc *goquery.Document, assistantID string) [3]string {
	row := doc.Find(`[data-testid="reported-without-task"] [data-testid="without-task-` + assistantID + `"]`)
	return [3]string{strings.TrimSpace(row.Find("th").Text()), strings.TrimSpace(row.Find(`[data-testid="conversations"]`).Text()),
		strings.TrimSpace(row.Find(`[data-testid="events"]`).Text())}
}

// TestMadeUpEventsMoveNoHeadline reproduces issue 32's finding through
// the API and the manager's page: a fresh assistant's 40 made-up
// "answered" events on conversations without a task leave its containment
// at "no data" and every figure of the business as it was, and are listed
// apart as its own claims. A conversation with its vouched task counts,
// whether the task opened before its events or after they were folded;
// the rest stay apart.
func TestMadeUpEventsMoveNoHeadline(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	b.Assistants.SetSiteSecrets(map[string][]byte{"shop": webtest.ShopSiteSecret})
	webtest.LoadHistory(t, b, 300, 200)
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Manager])
	before := webtest.ShownMetrics(t, c.Get("/metrics").Doc(t))

	bot, key := b.NewVouchedAssistant(t, "claims-bot")
	for i := range 40 {
		b.Report(t, key, fmt.Sprintf("made-up-%d", i), "informational", "answered")
	}
	b.RefreshMetrics(t)
	doc := c.Get("/metrics").Doc(t)
	after := webtest.ShownMetrics(t, doc)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("40 made-up events moved the business's figures (-before +after):\n%s", diff)
	}
	t.Logf("business: containment %s (%s), clarification %s (%s), before and after 40 made-up events",
		after["containment"][0], after["containment"][1], after["clarification"][0], after["clarification"][1])
	if got, want := withoutTaskRow(doc, bot.ID), [3]string{"claims-bot", "40", "40"}; got != want {
		t.Errorf("reported without a task: %q, want %q", got, want)
	}
	section := doc.Find(`[data-testid="reported-without-task"]`)
	if !strings.Contains(section.Find("h2").Text(), "Reported without a vouched customer") ||
		!strings.Contains(section.Find("p.muted").First().Text(), "the assistants' own claims") {
		t.Errorf("the section does not say what it lists: %q", section.Text())
	}
	fresh := webtest.ShownMetrics(t, c.Get("/metrics?assistant="+bot.ID).Doc(t))
	if fresh["containment"][0] != "no data" {
		t.Errorf("the fresh assistant's containment from its own claims: %q, want no data", fresh["containment"])
	}
	t.Logf("fresh assistant: containment %s after 40 made-up answered events", fresh["containment"][0])

	// An assistant whose customers the shop vouches for: a task opened
	// before the events counts; one opened after them too, at the next
	// refresh; a conversation it never opened a task in stays apart.
	widget, wkey := b.NewVouchedAssistant(t, "widget-bot")
	const customer = "customer@demo.countersign.test"
	openTask := func(conversation string) {
		t.Helper()
		b.Clock.Advance(time.Second) // a fresh assertion nonce
		b.Call(t, wkey, http.MethodPost, "/api/v1/tasks", webtest.OpenTaskBody(customer, conversation,
			b.VouchFor(widget.ID, customer, nil))).Want(t, http.StatusCreated)
	}
	openTask("real-1")
	b.Report(t, wkey, "real-1", "transactional_low", "executed")
	b.Report(t, wkey, "late-1", "ambiguous", "clarified")
	b.Report(t, wkey, "never-1", "informational", "answered")
	b.RefreshMetrics(t)
	mine := "/metrics?assistant=" + widget.ID
	if got := webtest.ShownMetrics(t, c.Get(mine).Doc(t))["containment"]; got != [2]string{"100.0%", "1 of 1"} {
		t.Errorf("the vouched task's conversation alone: containment %q, want 100.0%% (1 of 1)", got)
	}
	openTask("late-1")
	b.RefreshMetrics(t)
	doc = c.Get(mine).Doc(t)
	if got := webtest.ShownMetrics(t, doc); got["containment"] != [2]string{"50.0%", "1 of 2"} || got["clarification"] != [2]string{"50.0%", "1 of 2"} {
		t.Errorf("after the late task: containment %q, clarification %q; want 1 of 2 each", got["containment"], got["clarification"])
	}
	if got, want := withoutTaskRow(doc, widget.ID), [3]string{"widget-bot", "1", "1"}; got != want {
		t.Errorf("widget-bot reported without a task: %q, want %q", got, want)
	}
}

// TestAdminLetsReportsCountWithoutATask: the grant is off for a new
// assistant, shown on its card in the words of a widening grant; once an
// admin turns it on (audited), the assistant's reports count in the
// figures at once and the page says whose claims they include.
func TestAdminLetsReportsCountWithoutATask(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	bot, key := b.NewVouchedAssistant(t, "faq-bot")
	for i := range 4 {
		b.Report(t, key, fmt.Sprintf("faq-%d", i), "informational", "answered")
	}
	b.RefreshMetrics(t)
	manager := b.Client(t)
	manager.MustSignIn(b.Users[accounts.Manager])
	mine := "/metrics?assistant=" + bot.ID
	if got := webtest.ShownMetrics(t, manager.Get(mine).Doc(t))["containment"][0]; got != "no data" {
		t.Fatalf("before the grant: %q", got)
	}

	admin := b.Client(t)
	admin.MustSignIn(b.Users[accounts.Admin])
	card := admin.Get("/admin/assistants").Doc(t).Find(`[data-testid="assistant-faq-bot"]`)
	if got := card.Find(`[data-testid="reports-rule"]`).Text(); !strings.Contains(got, "Reports count with a vouched task") {
		t.Errorf("a new assistant's reports rule: %q", got)
	}
	if card.Find(`#` + bot.ID + `-reports-without-task`).Is(`[checked]`) {
		t.Error("the grant is on for a new assistant")
	}
	action := card.Find(`[data-testid="grants-form"]`).AttrOr("action", "")
	form := url.Values{"_csrf": {admin.CSRF("/admin/assistants")}, "max_write_budget": {"20"}, "max_inflight_limit": {"5"},
		"max_rate_per_minute": {"30"}, "reports_without_task": {"on"}}
	if res := admin.Post(action, form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d", res.StatusCode)
	}
	card = admin.Get("/admin/assistants").Doc(t).Find(`[data-testid="assistant-faq-bot"]`)
	if got := card.Find(`[data-testid="reports-rule"] .badge.warn`).Text(); got != "Reports count without a task" {
		t.Errorf("the card after the grant: %q", card.Find(`[data-testid="reports-rule"]`).Text())
	}

	doc := manager.Get(mine).Doc(t)
	if got := webtest.ShownMetrics(t, doc)["containment"]; got != [2]string{"100.0%", "4 of 4"} {
		t.Errorf("with the grant, no refresh: containment %q, want 100.0%% (4 of 4)", got)
	}
	if got := doc.Find(`[data-testid="without-task-granted"]`).Text(); !strings.Contains(got, "faq-bot") {
		t.Errorf("the page does not say faq-bot's claims count: %q", got)
	}
	if doc.Find(`[data-testid="without-task-empty"]`).Length() != 1 {
		t.Error("faq-bot is still listed apart")
	}
	var n int
	err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE action = 'assistant.grants_changed'
		AND data->>'assistant_id' = $1 AND (data->'after'->>'reports_without_task')::boolean
		AND NOT (data->'before'->>'reports_without_task')::boolean`, bot.ID).Scan(&n)
	if err != nil || n != 1 {
		t.Errorf("%d audit events of the grant (%v), want 1", n, err)
	}
}

// TestEventBoundsOverHTTP: past the conversation's bound the API answers
// 429 conversation_event_limit with Retry-After and a hint; a body past
// 32 KiB is a 413 event_too_large, whatever its fields.
func TestEventBoundsOverHTTP(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	for range 60 {
		b.Report(t, b.Key, "chatty", "informational", "answered")
	}
	res := b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/chatty/events", map[string]any{"intent": "informational", "mode": "answered"})
	if res.Status != http.StatusTooManyRequests || res.JSON["code"] != "conversation_event_limit" || res.JSON["hint"] == "" ||
		res.Header.Get("Retry-After") != "3600" {
		t.Errorf("the 61st event of the hour: %d Retry-After %q %s", res.Status, res.Header.Get("Retry-After"), res.Body)
	}
	padded := `{"intent": "informational", "mode": "answered"}` + strings.Repeat(" ", 33<<10)
	res = b.Call(t, b.Key, http.MethodPost, "/api/v1/conversations/padded/events", padded)
	if res.Status != http.StatusRequestEntityTooLarge || res.JSON["code"] != "event_too_large" || res.JSON["hint"] == "" {
		t.Errorf("a padded 33 KiB body: %d %s", res.Status, res.Body)
	}
}
