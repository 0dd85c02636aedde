package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

// TestAdminSetsAnAssistantsGrants edits an assistant's maxima and its
// any-customer right on /admin/assistants: the form needs the CSRF token,
// bad numbers re-render with 422 and what was typed, a saved change shows
// on the page, reaches the API at once and is audited with who made it.
func TestAdminSetsAnAssistantsGrants(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
	bot, key := b.NewVouchedAssistant(t, "grant-bot")
	c := b.Client(t)
	c.MustSignIn(b.Users[accounts.Admin])
	card := func() string {
		return c.Get("/admin/assistants").Doc(t).Find(`[data-testid="assistant-grant-bot"] [data-testid="grants"]`).Text()
	}
	if got := card(); !strings.Contains(got, "Customers vouched for") || !strings.Contains(got, bot.ID) {
		t.Errorf("a new assistant's card: %q", got)
	}
	page := c.Get("/admin/assistants").Doc(t)
	action, _ := page.Find(`[data-testid="assistant-grant-bot"] [data-testid="grants-form"]`).Attr("action")
	if v, _ := page.Find("#" + bot.ID + "-max_write_budget").Attr("value"); v != "20" {
		t.Errorf("the default write budget maximum shown: %q", v)
	}
	form := url.Values{"max_write_budget": {"50"}, "max_inflight_limit": {"4"}, "max_rate_per_minute": {"60"}, "any_customer": {"on"}}

	if res := c.Post(action, form); res.StatusCode != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d", res.StatusCode)
	}
	bad := url.Values{"_csrf": {c.CSRF("/admin/assistants")}, "max_write_budget": {"lots"}, "max_inflight_limit": {"0"}, "max_rate_per_minute": {"60"}}
	res := c.Post(action, bad)
	doc := res.Doc(t)
	if res.StatusCode != http.StatusUnprocessableEntity || doc.Find(`[data-testid="max_write_budget-error"]`).Length() != 1 ||
		!strings.Contains(doc.Find(`[data-testid="max_inflight_limit-error"]`).Text(), "from 1 to 100") {
		t.Errorf("bad numbers: %d %s", res.StatusCode, doc.Find(".field-error").Text())
	}
	if v, _ := doc.Find("#" + bot.ID + "-max_write_budget").Attr("value"); v != "lots" {
		t.Errorf("the typed value was not kept: %q", v)
	}

	form.Set("_csrf", c.CSRF("/admin/assistants"))
	if res := c.Post(action, form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d %s", res.StatusCode, res.Text)
	}
	if got := card(); !strings.Contains(got, "Acts for any customer") {
		t.Errorf("the card after the grant: %q", got)
	}
	// The API follows at once: no assertion needed, and the new maximum.
	b.Call(t, key, http.MethodPost, "/api/v1/tasks", map[string]any{"customer_ref": "anyone@example.test",
		"conversation_id": "conv-granted", "allowed_actions": []string{"issue_refund"}, "write_budget": 50}).Want(t, http.StatusCreated)

	var n int
	err := b.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM events WHERE action = 'assistant.grants_changed'
		AND actor_kind = 'user' AND data->>'assistant_id' = $1 AND (data->'after'->>'any_customer')::boolean
		AND (data->'before'->>'max_write_budget')::int = 20`, bot.ID).Scan(&n)
	if err != nil || n != 1 {
		t.Errorf("%d audit events of the change (%v), want 1", n, err)
	}
}
