package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/web/webtest"

	"countersign/internal/accounts"
)

// TestRefusedHandoffNotesAreKept: a Resolve or Give back refused — no
// note, a note too long, someone else holding the conversation, someone
// resolving it first — re-renders the hand-off's page (422) led by an
// error summary linked to the field, and what the person typed is still
// there: in its field while the form is offered, else shown to copy.
func TestRefusedHandoffNotesAreKept(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop())
	f := webtest.NewShopper(t, b)
	id := webtest.InsertHandoff(t, b, f.Task.ConversationID, f.Task.ID, "transactional_high", `{"summary":"Wants a refund."}`, b.Clock.Now())
	agent := b.Client(t)
	agent.MustSignIn(b.Users[accounts.Agent])
	tok := agent.CSRF("/handoffs")
	agent.Post(webtest.HandoffPath(id, "take"), url.Values{"_csrf": {tok}})

	refused := func(c *webtest.Client, action, note, field, says string) {
		t.Helper()
		res := c.Post(webtest.HandoffPath(id, action), url.Values{"_csrf": {c.CSRF("/handoffs")}, "note": {note}})
		if res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("%s with %.20q: %d, want 422", action, note, res.StatusCode)
		}
		doc := res.Doc(t)
		if ids := webtest.ErrorSummary(t, doc); len(ids) != 1 || ids[0] != field {
			t.Errorf("%s with %.20q: the summary links to %v, want [%s]", action, note, ids, field)
		}
		if got := doc.Find(`[data-testid="error-summary"]`).Text(); !strings.Contains(got, says) {
			t.Errorf("%s with %.20q: the summary says %q, want %q", action, note, strings.Join(strings.Fields(got), " "), says)
		}
		if got := doc.Find("#" + field).Text(); got != note {
			t.Errorf("%s: #%s holds %.40q, want what was typed, %.40q", action, field, got, note)
		}
	}
	refused(agent, "resolve", " ", "resolve-note", "Say what you did")
	long := strings.Repeat("Refunded by phone. ", 110)
	refused(agent, "resolve", long, "resolve-note", "under 2,000 characters")
	refused(agent, "give-back", strings.Repeat("x", 2001), "give-back-note", "under 2,000 characters")

	other := b.Client(t)
	other.MustSignIn(b.CreateUser(t, accounts.Agent))
	refused(other, "give-back", "Ask which order.", "kept-text", "only they can resolve it or give it back")

	if res := agent.Post(webtest.HandoffPath(id, "resolve"), url.Values{"_csrf": {tok}, "note": {"Refunded by phone."}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("resolve: %d", res.StatusCode)
	}
	manager := b.Client(t)
	manager.MustSignIn(b.Users[accounts.Manager])
	refused(manager, "resolve", "Me too.", "kept-text", "over already")
}
