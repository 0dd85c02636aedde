package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"countersign/internal/accounts"
)

// TestRefusedHandoffNotesAreKept: a Resolve or Give back refused — no
// note, a note too long, someone else holding the conversation, someone
// resolving it first — re-renders the hand-off's page (422) led by an
// error summary linked to the field, and what the person typed is still
// there: in its field while the form is offered, else shown to copy.
func TestRefusedHandoffNotesAreKept(t *testing.T) {
	t.Parallel()
	b := setup(t, withShop())
	f := newConsoleFixture(t, b)
	id := insertHandoff(t, b, f.task.ConversationID, f.task.ID, "transactional_high", `{"summary":"Wants a refund."}`, b.clock.Now())
	agent := b.client(t)
	agent.mustSignIn(b.users[accounts.Agent])
	tok := agent.csrf("/handoffs")
	agent.post(handoffPath(id, "take"), url.Values{"_csrf": {tok}})

	refused := func(c *client, action, note, field, says string) {
		t.Helper()
		res := c.post(handoffPath(id, action), url.Values{"_csrf": {c.csrf("/handoffs")}, "note": {note}})
		if res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("%s with %.20q: %d, want 422", action, note, res.StatusCode)
		}
		doc := res.doc(t)
		if ids := errorSummary(t, doc); len(ids) != 1 || ids[0] != field {
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

	other := b.client(t)
	other.mustSignIn(b.createUser(t, accounts.Agent))
	refused(other, "give-back", "Ask which order.", "kept-text", "only they can resolve it or give it back")

	if res := agent.post(handoffPath(id, "resolve"), url.Values{"_csrf": {tok}, "note": {"Refunded by phone."}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("resolve: %d", res.StatusCode)
	}
	manager := b.client(t)
	manager.mustSignIn(b.users[accounts.Manager])
	refused(manager, "resolve", "Me too.", "kept-text", "over already")
}
