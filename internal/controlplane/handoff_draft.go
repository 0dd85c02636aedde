package controlplane

import (
	"context"
	"encoding/json"
	"errors"

	"countersign/internal/apperr"
	"countersign/store"
)

// HandoffDraft is the write an assistant prepared in a hand-off and did not
// propose: a person may send it on as their own proposal or discard it.
type HandoffDraft struct {
	Action string          `json:"action"`
	Args   json.RawMessage `json:"args"`
}

// SendHandoffDraft proposes the write the assistant prepared in hand-off
// id as actor's own proposal on the conversation's task (the hand-off's,
// else the conversation's newest). It goes the normal route:
// the adapter's dry-run quote, then the action's policy — a customer's
// confirmation where the policy asks for one, an approval in the queue
// where it asks for that — so a person sending it on decides nothing the
// rules leave to someone else. Only the person holding the conversation
// may send it; the hand-off records which invocation it became.
func (s *Service) SendHandoffDraft(ctx context.Context, actor Actor, id int64) (Invocation, error) {
	draft, taskID, err := s.heldDraft(ctx, actor, id)
	if err != nil {
		return Invocation{}, err
	}
	inv, err := s.Propose(ctx, Proposal{TaskID: taskID, Action: draft.Action, Args: draft.Args, Actor: actor,
		Summary: "Sent on by " + actor.Name + " from the assistant's hand-off."})
	if err != nil {
		return Invocation{}, err
	}
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		return s.record(ctx, tx, actor, "handoff.draft_sent", taskID, inv.ID, map[string]any{"handoff_id": id, "action": draft.Action})
	})
	return inv, err
}

// DiscardHandoffDraft records that the person holding the conversation
// set the assistant's prepared write aside; nothing is proposed.
func (s *Service) DiscardHandoffDraft(ctx context.Context, actor Actor, id int64) error {
	draft, taskID, err := s.heldDraft(ctx, actor, id)
	if err != nil {
		return err
	}
	return s.store.InTx(ctx, func(tx *store.Tx) error {
		return s.record(ctx, tx, actor, "handoff.draft_discarded", taskID, "", map[string]any{"handoff_id": id, "action": draft.Action})
	})
}

// heldDraft reads hand-off id's draft for actor, who must hold its open
// conversation, and the task to propose it on: the hand-off's own, else
// the conversation's newest.
func (s *Service) heldDraft(ctx context.Context, actor Actor, id int64) (draft HandoffDraft, taskID string, err error) {
	if err := staffOnly(actor, "send on an assistant's draft"); err != nil {
		return HandoffDraft{}, "", err
	}
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		h, err := tx.LockHandoffs(ctx, id)
		if err != nil {
			return err
		}
		switch {
		case h.Open == 0:
			return apperr.New(apperr.IllegalTransition, "This conversation's hand-off is over already; its draft can no longer be sent.")
		case h.HolderID == nil:
			return apperr.New(apperr.IllegalTransition, "Take the conversation first: only the person holding it sends its draft on.")
		case *h.HolderID != actor.UserID:
			return apperr.New(apperr.Forbidden, "%s holds this conversation; only they can send its draft on.", h.HolderName)
		}
		data, task, err := tx.HandoffData(ctx, id)
		if err != nil {
			return err
		}
		var d struct {
			WouldPropose *HandoffDraft `json:"would_propose"`
		}
		if json.Unmarshal(data, &d) != nil || d.WouldPropose == nil || d.WouldPropose.Action == "" {
			return apperr.New(apperr.NotFound, "The assistant prepared no write in this hand-off.")
		}
		draft = *d.WouldPropose
		if task != nil {
			taskID = *task
			return nil
		}
		taskID, err = tx.ConversationTask(ctx, h.ConversationID)
		if errors.Is(err, store.ErrNotFound) {
			return apperr.New(apperr.IllegalTransition, "The assistant opened no task for this conversation, so there is no customer to act for: reply to the customer yourself.")
		}
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return HandoffDraft{}, "", apperr.Wrap(err, apperr.NotFound, "No such hand-off.")
	}
	return draft, taskID, err
}
