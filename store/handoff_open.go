package store

import (
	"context"
	"fmt"
)

// HandoffOpening is what decides whether an assistant may hand a
// conversation to a person, read under LockHandoffOpening's lock.
type HandoffOpening struct {
	// HasTask says the assistant has a task (in any state) for the
	// conversation.
	HasTask bool
	// OpenID is the conversation's first hand-off still open (waiting or
	// taken); nil when none is.
	OpenID *int64
	// Waiting counts the assistant's conversations waiting for a person
	// (handoff_queue rows nobody took).
	Waiting int64
}

// LockHandoffOpening takes the assistant's hand-off lock for the rest of
// the transaction and reads what decides a new hand-off of the
// conversation. Every hand-off an assistant makes through the API takes
// this lock first, so two at once are serialised and each counts what the
// other committed: the lock is its own statement, and the reads after it
// see what committed before it was granted. Nothing else takes the lock,
// so it adds no order to the task-then-conversation one of migration 00027.
func (t *Tx) LockHandoffOpening(ctx context.Context, conversationID, assistantID string) (HandoffOpening, error) {
	var o HandoffOpening
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('handoff_assistant:' || $1::text, 0))`, assistantID); err != nil {
		return o, fmt.Errorf("store.LockHandoffOpening(%s): lock: %w", conversationID, err)
	}
	err := t.tx.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM tasks WHERE conversation_id = $1 AND assistant_id = $2),
			(SELECT min(conversation_event_id) FROM handoffs_open WHERE conversation_id = $1),
			(SELECT count(*) FROM handoff_queue WHERE assistant_id = $2 AND taken = 0)`, conversationID, assistantID).
		Scan(&o.HasTask, &o.OpenID, &o.Waiting)
	if err != nil {
		return o, fmt.Errorf("store.LockHandoffOpening(%s): %w", conversationID, err)
	}
	return o, nil
}
