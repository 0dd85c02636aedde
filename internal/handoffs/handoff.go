package handoffs

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// Outcome is how a person ended a hand-off. Each value is mirrored by the
// CHECK constraint on handoff_closures.outcome.
type Outcome string

// The ways a hand-off ends.
const (
	// Resolved: a person dealt with the customer's request; the
	// assistant has nothing left to do for it.
	Resolved Outcome = "resolved"
	// GivenBack: a person hands the conversation back to the assistant,
	// with a note of what to do next.
	GivenBack Outcome = "given_back"
)

// event is the event that records a hand-off ending with o.
func (o Outcome) event() controlplane.EventAction {
	return controlplane.EventAction("handoff." + string(o))
}

// MaxNote bounds a resolve or give-back note, in characters.
const MaxNote = 2000

// Take assigns the open hand-offs of the conversation hand-off id
// belongs to (one piece of work) to actor unless someone took them first;
// it returns who holds them now. Taking is recorded in the audit trail
// once. A hand-off already resolved or given back is an illegal transition.
func (s *Service) Take(ctx context.Context, actor controlplane.Actor, id int64) (takenBy int64, err error) {
	if err := staffOnly(actor, "take a hand-off"); err != nil {
		return 0, err
	}
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		h, err := tx.LockHandoffs(ctx, id)
		if err != nil {
			return err
		}
		if err := latestOpen(h, id); err != nil {
			return err // posted from a page older than the conversation's open round
		}
		if h.HolderID != nil {
			takenBy = *h.HolderID
			return nil // someone holds it; nothing changed
		}
		if h.Open == 0 {
			return apperr.New(apperr.IllegalTransition, "This conversation's hand-off is over already: someone resolved it or gave it back.")
		}
		if _, err := tx.AssignHandoffs(ctx, h.ConversationID, actor.UserID, s.now()); err != nil {
			return err
		}
		takenBy = actor.UserID
		return s.record(ctx, tx, actor, controlplane.EventHandoffTaken, deref(h.TaskID), "", map[string]any{"handoff_id": id,
			"conversation_id": h.ConversationID, "assistant_id": h.AssistantID})
	})
	return takenBy, err
}

// Close ends the open hand-offs of the conversation hand-off id
// belongs to: resolved, or given back to the assistant, with a note the
// assistant is told. The person who holds it may close it, or anyone when
// nobody does (closing takes it); it is recorded once, in the audit trail
// (handoff.resolved or handoff.given_back, which the assistant's webhook
// delivers). When two people close it at once the conversation's lock
// serialises them: the second is told it is over already (a conflict).
func (s *Service) Close(ctx context.Context, actor controlplane.Actor, id int64, outcome Outcome, note string) error {
	verb := map[Outcome]string{Resolved: "resolve a hand-off", GivenBack: "give a conversation back"}[outcome]
	if verb == "" {
		return apperr.InvalidFields(map[string]string{"outcome": "resolved or given_back"})
	}
	if err := staffOnly(actor, verb); err != nil {
		return err
	}
	note = strings.TrimSpace(note)
	switch {
	case note == "" && outcome == GivenBack:
		return apperr.InvalidFields(map[string]string{"note": "Tell the assistant what to do next: it reads this note."})
	case note == "":
		return apperr.InvalidFields(map[string]string{"note": "Say what you did for the customer: the assistant reads this note."})
	case utf8.RuneCountInString(note) > MaxNote:
		return apperr.InvalidFields(map[string]string{"note": "Keep the note under 2,000 characters."})
	}
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		h, err := tx.LockHandoffs(ctx, id)
		if err != nil {
			return err
		}
		if err := latestOpen(h, id); err != nil {
			return err // posted from a page older than the conversation's open round
		}
		if h.Open == 0 {
			return &apperr.Error{Kind: apperr.Conflict, Code: "handoff_closed",
				Message: "This conversation's hand-off is over already: someone resolved it or gave it back. Nothing was changed.",
				Hint:    "Read the page again to see who and when."}
		}
		over, overErr := tx.OpenTakeover(ctx, h.ConversationID)
		if overErr != nil && !errors.Is(overErr, store.ErrNotFound) {
			return overErr
		}
		takenOver := overErr == nil
		if h.HolderID != nil && *h.HolderID != actor.UserID {
			took := " took this conversation"
			if takenOver && over.FromID == actor.UserID {
				took = " took this conversation over from you"
			}
			return &apperr.Error{Kind: apperr.Conflict, Code: "handoff_taken",
				Message: h.HolderName + took + "; only they can resolve it or give it back. Nothing was changed."}
		}
		now := s.now()
		if _, err := tx.AssignHandoffs(ctx, h.ConversationID, actor.UserID, now); err != nil {
			return err
		}
		n, err := tx.CloseHandoffs(ctx, h.ConversationID, string(outcome), actor.UserID, note, now)
		if err != nil {
			return err
		}
		takenAt := now
		if h.TakenAt != nil {
			takenAt = *h.TakenAt
		}
		// The event holds the hand-off as it was when it ended: the
		// assistant's webhook body is made from it.
		data := map[string]any{"handoff_id": id,
			"conversation_id": h.ConversationID, "assistant_id": h.AssistantID, "outcome": string(outcome), "note": note, "handoffs": n,
			"handed_off_at": h.FirstOpenAt, "taken_at": takenAt, "latest_handoff_id": *h.LatestID}
		if takenOver {
			data["taken_over"] = TakeoverOf(over)
		}
		return s.record(ctx, tx, actor, outcome.event(), deref(h.TaskID), "", data)
	})
	return err
}
