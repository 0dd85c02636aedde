package demo_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/demo"
	"countersign/store"
	"countersign/store/dbtest"
)

// TestLoadHistoryOnce: a load makes the rows its spec asks for, a finished
// one leaves nothing for a person to do, and a second load with the same
// prefix adds nothing.
func TestLoadHistoryOnce(t *testing.T) {
	t.Parallel()
	st := store.New(dbtest.New(t))
	ctx := context.Background()
	var agent int64
	if err := st.Pool().QueryRow(ctx, `INSERT INTO users (email, name, role, password_hash) VALUES ('agent@hist.test', 'Hist Agent', 'agent', '')
		RETURNING id`).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	spec := demo.HistorySpec{Prefix: "h", Invocations: 1234, Conversations: 56, Days: 30,
		End: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), AssistantID: "asst_hist", Finished: true, HandoffsResolvedBy: agent}
	for range 2 {
		if err := demo.LoadHistory(ctx, st, spec); err != nil {
			t.Fatal(err)
		}
	}
	type counts struct {
		Invocations, Tasks, Proposed, Refusals, ConversationEvents, Open, Before int
		// HandoffsWaiting and HandoffsUnresolved: every hand-off of the
		// history was resolved when it happened.
		HandoffsWaiting, HandoffsUnresolved int
	}
	var got counts
	if err := st.Pool().QueryRow(ctx, `SELECT
		(SELECT count(*) FROM invocations), (SELECT count(*) FROM tasks),
		(SELECT count(*) FROM events WHERE action = 'invocation.proposed'),
		(SELECT count(*) FROM events WHERE action LIKE 'proposal.%'),
		(SELECT count(*) FROM conversation_events),
		(SELECT count(*) FROM invocations WHERE state IN ('awaiting_approval', 'awaiting_confirmation', 'unverified')),
		(SELECT count(*) FROM invocations WHERE created_at < $1::timestamptz - interval '30 days' OR created_at > $1),
		(SELECT count(*) FROM handoffs_open) + (SELECT count(*) FROM handoff_queue),
		(SELECT count(*) FROM conversation_events e WHERE mode = 'handed_off'
			AND NOT EXISTS (SELECT 1 FROM handoff_closures c WHERE c.conversation_event_id = e.id AND c.at <= $1))`, spec.End).
		Scan(&got.Invocations, &got.Tasks, &got.Proposed, &got.Refusals, &got.ConversationEvents, &got.Open, &got.Before,
			&got.HandoffsWaiting, &got.HandoffsUnresolved); err != nil {
		t.Fatal(err)
	}
	want := counts{Invocations: 1234, Tasks: 124, Proposed: 1234, Refusals: 7, ConversationEvents: 112}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows loaded (-want +got):\n%s", diff)
	}
}
