package metrics_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/metrics"
	"countersign/store"
)

// TestReportsWithoutTaskCountNowhere: a conversation's events count only
// when its assistant has a task there whose customer the business vouched
// for, whether the task opened before the events or after them were
// folded, or when an admin let the assistant's reports count without one
// (read at once, no refresh). An unvouched task, or another assistant's
// task in a conversation of the same id, counts for nothing. The rest is
// kept and listed per assistant, and never moves a figure.
func TestReportsWithoutTaskCountNowhere(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	h.exec(`INSERT INTO assistants (id, name, created_at) VALUES ('asst_c', 'C', $1)`, day)
	// The business: asst_a's three conversations, one contained, one
	// clarified, one handed off.
	h.conv("a1", "asst_a", "informational", "answered", 0)
	h.conv("a2", "asst_a", "ambiguous", "clarified", 0)
	h.conv("a3", "asst_a", "transactional_high", "handed_off", 0)
	before := results(h.report(oneDay(), day))

	task := func(id, assistant, conversation string, vouched any) {
		h.exec(`INSERT INTO tasks (id, assistant_id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit,
			rate_per_minute, expires_at, state, created_at, updated_at, vouched)
			VALUES ($1, $2, 'cust', $3, '{issue_refund}', 1, 1, 1, $4, 'active', $4, $4, $5)`, id, assistant, conversation, day, vouched)
	}
	// asst_c makes up 40 answered conversations, one of them in a task it
	// opened on its own any-customer grant: nobody vouched for that
	// task's customer, so it counts no more than no task.
	task("task_c3", "asst_c", "made-up-3", "any_customer")
	for i := range 40 {
		h.conv(fmt.Sprintf("made-up-%d", i), "asst_c", "informational", "answered", i%30)
	}
	rep := h.report(oneDay(), day)
	if diff := cmp.Diff(before, results(rep)); diff != "" {
		t.Errorf("made-up reports moved the business's figures (-before +after):\n%s", diff)
	}
	fresh := metrics.Filter{From: day, To: day.AddDate(0, 0, 1), Assistant: "asst_c"}
	if got := results(h.report(fresh, day))["containment"].Text; got != "no data" {
		t.Errorf("the fresh assistant's containment from its own claims: %q, want no data", got)
	}
	if diff := cmp.Diff([]store.UncountedReport{{AssistantID: "asst_c", Conversations: 40, Events: 40}}, rep.WithoutTask); diff != "" {
		t.Errorf("reported without a task (-want +got):\n%s", diff)
	}

	// Tasks arriving after the events were folded: asst_c's task vouched
	// for by an assertion makes made-up-0 count; an unvouched one, and
	// asst_a's task in made-up-2, do not.
	task("task_c0", "asst_c", "made-up-0", "assertion")
	task("task_c1", "asst_c", "made-up-1", nil)
	task("task_a2", "asst_a", "made-up-2", "any_customer")
	rep = h.report(fresh, day)
	if got := results(rep)["containment"]; got.Num != 1 || got.Den != 1 {
		t.Errorf("after a vouched task in one conversation: containment %d of %d, want 1 of 1", got.Num, got.Den)
	}
	if diff := cmp.Diff([]store.UncountedReport{{AssistantID: "asst_c", Conversations: 39, Events: 39}}, rep.WithoutTask); diff != "" {
		t.Errorf("reported without a task after the tasks (-want +got):\n%s", diff)
	}

	// The admin's grant counts them all, at once.
	h.exec(`UPDATE assistants SET reports_without_task = true WHERE id = 'asst_c'`)
	rep, err := metrics.Build(t.Context(), h.st, fresh, day)
	if err != nil {
		t.Fatal(err)
	}
	if got := results(rep)["containment"]; got.Num != 40 || got.Den != 40 || len(rep.WithoutTask) != 0 {
		t.Errorf("with the grant: containment %d of %d, %d listed apart; want 40 of 40, none", got.Num, got.Den, len(rep.WithoutTask))
	}
}
