package assistants

import (
	"context"
	"fmt"

	"countersign/internal/apperr"
	"countersign/store"
)

// MaxWaitingHandoffs is how many of one assistant's conversations may
// wait for a person at once. Fifty is a full page of the hand-off list and
// more than a team takes within its 15-minute target: a real assistant
// with that many customers already waiting has nobody to hand a fifty-first
// to, and a key making them up (120 a minute reached 170,000 a day) fills
// no more than that.
const MaxWaitingHandoffs = 50

// insertEvent records the event; a hand-off only within the hand-off
// limits (recordHandoff).
func (s *Service) insertEvent(ctx context.Context, a Assistant, row store.ConversationEvent) (store.ConversationEvent, error) {
	if row.Mode != string(ModeHandedOff) {
		return s.store.InsertConversationEvent(ctx, row)
	}
	return s.recordHandoff(ctx, a, row)
}

// recordHandoff records a hand-off under the assistant's hand-off lock, so
// that no race lets one past the limits. A hand-off needs a task of the
// assistant for the conversation (invalid input on conversation_id, code
// handoff_needs_task). A conversation has one hand-off open at a time: one
// made while its hand-off is open (waiting or taken) joins that round, as
// the list and the assistant's GET /api/v1/conversations/{id} group them —
// one card, "handed off N times", its summary and draft the newest, a page
// read before it sending nothing — so it adds no conversation to anyone's
// queue and is not counted again. A hand-off that opens a round finds the
// assistant with fewer than MaxWaitingHandoffs conversations waiting, else
// limit reached (code handoff_limit).
func (s *Service) recordHandoff(ctx context.Context, a Assistant, row store.ConversationEvent) (store.ConversationEvent, error) {
	var saved store.ConversationEvent
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		o, err := tx.LockHandoffOpening(ctx, row.ConversationID, a.ID)
		if err != nil {
			return err
		}
		if err := handoffAllowed(o); err != nil {
			return err
		}
		saved, err = tx.InsertConversationEvent(ctx, row)
		return err
	})
	if err != nil {
		return store.ConversationEvent{}, fmt.Errorf("assistants.recordHandoff(%s): %w", row.ConversationID, err)
	}
	return saved, nil
}

// handoffAllowed says why a hand-off may not be opened, nil when it may.
func handoffAllowed(o store.HandoffOpening) error {
	switch {
	case !o.HasTask:
		return &apperr.Error{Kind: apperr.Invalid, Code: "handoff_needs_task", Message: "A hand-off needs a task for this conversation.",
			Hint:   "Open a task for this conversation first (POST /api/v1/tasks with its conversation_id and the customer), then hand off.",
			Fields: map[string]string{"conversation_id": "no task of yours is for this conversation: open a task for this conversation first"}}
	case o.OpenID != nil:
		return nil // it joins the open round
	case o.Waiting >= MaxWaitingHandoffs:
		return &apperr.Error{Kind: apperr.LimitReached, Code: "handoff_limit", Retryable: true,
			Message: fmt.Sprintf("%d of your conversations are already waiting for a person, the most there may be.", o.Waiting),
			Hint: "Tell the customer a person will be in touch by other means, or ask them to wait; " +
				"hand off again once people have taken some of the waiting ones."}
	}
	return nil
}
