package controlplane

import (
	"context"
	"errors"

	"countersign/internal/apperr"
	"countersign/store"
)

// TakeHandoff assigns a hand-off to actor unless someone took it first; it
// returns who holds it now. Taking it is recorded in the audit trail.
func (s *Service) TakeHandoff(ctx context.Context, actor Actor, id int64) (takenBy int64, err error) {
	if actor.Kind != ActorUser || actor.Role == "customer" {
		return 0, apperr.New(apperr.Forbidden, "Only a support agent can take a hand-off.")
	}
	err = s.store.InTx(ctx, func(tx *store.Tx) error {
		by, conversation, task, err := tx.TakeHandoff(ctx, id, actor.UserID, s.now())
		if err != nil {
			return err
		}
		takenBy = by
		if by != actor.UserID {
			return nil // someone else holds it; nothing changed
		}
		taskID := ""
		if task != nil {
			taskID = *task
		}
		return s.record(ctx, tx, actor, "handoff.taken", taskID, "", map[string]any{"handoff_id": id, "conversation_id": conversation})
	})
	if errors.Is(err, store.ErrNotFound) {
		return 0, apperr.Wrap(err, apperr.NotFound, "No such hand-off.")
	}
	return takenBy, err
}
