package handoffs

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// MaxTakeOverReason bounds a take-over's reason, in characters.
const MaxTakeOverReason = 500

// TakeOver moves the conversation hand-off id belongs to from the
// person holding it to actor, a manager or admin, with a reason: for a
// holder who is away, so the conversation can still be ended. It is
// recorded once (handoff_takeovers and a handoff.taken_over event: who
// from whom, when, why). An agent is forbidden; a missing reason is
// invalid; a conversation nobody holds (take it instead), the actor's own,
// or one ended meanwhile is a conflict that changes nothing. Racing the
// holder's resolve, the conversation's lock serialises the two: exactly
// one wins and the other is told plainly.
func (s *Service) TakeOver(ctx context.Context, actor controlplane.Actor, id int64, reason string) error {
	if err := staffOnly(actor, "take over a conversation"); err != nil {
		return err
	}
	if actor.Role != "manager" && actor.Role != "admin" {
		return apperr.New(apperr.Forbidden, "Only a manager can take over a conversation someone else holds: ask them, or a manager.")
	}
	reason = strings.TrimSpace(reason)
	switch {
	case reason == "":
		return apperr.InvalidFields(map[string]string{"reason": "Say why you are taking it over: it is recorded with your name."})
	case utf8.RuneCountInString(reason) > MaxTakeOverReason:
		return apperr.InvalidFields(map[string]string{"reason": "Keep the reason under 500 characters."})
	}
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		h, err := tx.LockHandoffs(ctx, id)
		if err != nil {
			return err
		}
		if err := latestOpen(h, id); err != nil {
			return err
		}
		switch {
		case h.Open == 0:
			return &apperr.Error{Kind: apperr.Conflict, Code: "handoff_closed",
				Message: "This conversation's hand-off is over already: someone resolved it or gave it back. Nothing was changed.",
				Hint:    "Read the page again to see who and when."}
		case h.HolderID == nil:
			return &apperr.Error{Kind: apperr.Conflict, Code: "handoff_not_taken",
				Message: "Nobody holds this conversation: take it instead. Nothing was changed."}
		case *h.HolderID == actor.UserID:
			return &apperr.Error{Kind: apperr.Conflict, Code: "handoff_yours", Message: "You hold this conversation already. Nothing was changed."}
		}
		now := s.now()
		if err := tx.TakeOverHandoffs(ctx, h.ConversationID, *h.LatestID, *h.HolderID, actor.UserID, reason, now); err != nil {
			return err
		}
		return s.record(ctx, tx, actor, controlplane.EventHandoffTakenOver, deref(h.TaskID), "", map[string]any{"handoff_id": id,
			"conversation_id": h.ConversationID, "assistant_id": h.AssistantID, "from_user_id": *h.HolderID, "from": h.HolderName,
			"reason": reason})
	})
	return err
}

// Takeover is a take-over as the assistant's API and webhooks show it: who
// took the conversation from whom, when and why.
type Takeover struct {
	From   string    `json:"from"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// TakeoverOf is the take-over row as the API shows it.
func TakeoverOf(t store.HandoffTakeover) Takeover {
	return Takeover{From: t.FromName, By: t.ToName, At: t.At.UTC(), Reason: t.Reason}
}
