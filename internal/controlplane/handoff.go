package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"countersign/internal/apperr"
	"countersign/store"
)

// Handoff is a conversation the assistant handed to a person, with what it
// prepared so the person starts informed: when the assistant should not act,
// handing over well is the right answer.
type Handoff struct {
	ID             int64
	ConversationID string
	AssistantID    string
	TaskID         string
	Intent         string
	At             time.Time
	// Summary, Facts and WouldPropose are the assistant's preparation.
	Summary      string
	Facts        json.RawMessage
	WouldPropose json.RawMessage
	// TakenBy is the user who took it; zero while nobody has.
	TakenBy     int64
	TakenByName string
}

// Handoffs lists hand-offs, untaken ones first.
func (s *Service) Handoffs(ctx context.Context, limit int) ([]Handoff, error) {
	rows, err := s.store.Handoffs(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Handoff, 0, len(rows))
	for _, r := range rows {
		h := Handoff{ID: r.ID, ConversationID: r.ConversationID, AssistantID: r.AssistantID, Intent: r.Intent, At: r.At}
		if r.TaskID != nil {
			h.TaskID = *r.TaskID
		}
		if r.TakenBy != nil {
			h.TakenBy = *r.TakenBy
		}
		if r.TakenByName != nil {
			h.TakenByName = *r.TakenByName
		}
		var data struct {
			Summary      string          `json:"summary"`
			Facts        json.RawMessage `json:"facts"`
			WouldPropose json.RawMessage `json:"would_propose"`
		}
		_ = json.Unmarshal(r.Data, &data)
		h.Summary, h.Facts, h.WouldPropose = data.Summary, data.Facts, data.WouldPropose
		out = append(out, h)
	}
	return out, nil
}

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

// TaskFilter selects tasks for the agents' list.
type TaskFilter struct {
	// Query matches the start of a customer reference or conversation id,
	// or a whole task id.
	Query string
	State TaskState
	Limit int
}

// Tasks lists tasks, those with unverified or not-dispatched work first.
func (s *Service) Tasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	rows, err := s.store.Tasks(ctx, store.TaskFilter{Query: f.Query, State: string(f.State), Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]Task, len(rows))
	for i, r := range rows {
		out[i] = taskFromRow(r)
	}
	return out, nil
}
