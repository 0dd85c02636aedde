package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Handoff is a conversation the assistant handed to a person (a
// conversation event with mode handed_off), with who took it.
type Handoff struct {
	ID             int64           `db:"id"`
	ConversationID string          `db:"conversation_id"`
	AssistantID    string          `db:"assistant_id"`
	TaskID         *string         `db:"task_id"`
	Intent         string          `db:"intent"`
	At             time.Time       `db:"at"`
	Data           json.RawMessage `db:"data"`
	TakenBy        *int64          `db:"taken_by"`
	TakenByName    *string         `db:"taken_by_name"`
	TakenAt        *time.Time      `db:"taken_at"`
}

// Handoffs lists hand-offs, untaken ones first, newest first within each.
func (s *Store) Handoffs(ctx context.Context, limit int) ([]Handoff, error) {
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	rows, _ := s.pool.Query(ctx, `
		SELECT e.id, e.conversation_id, e.assistant_id, e.task_id, e.intent, e.at, e.data,
			h.user_id AS taken_by, u.name AS taken_by_name, h.taken_at
		FROM conversation_events e
		LEFT JOIN handoff_assignments h ON h.conversation_event_id = e.id
		LEFT JOIN users u ON u.id = h.user_id
		WHERE e.mode = 'handed_off'
		ORDER BY h.user_id IS NOT NULL, e.at DESC, e.id DESC
		LIMIT $1`, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Handoff])
	if err != nil {
		return nil, fmt.Errorf("store.Handoffs: %w", err)
	}
	return out, nil
}

// TakeHandoff assigns a hand-off to userID when nobody has taken it, and
// returns who holds it afterwards and the hand-off's conversation and task
// (for the audit event). A missing hand-off is ErrNotFound.
func (t *Tx) TakeHandoff(ctx context.Context, id, userID int64, at time.Time) (takenBy int64, conversationID string, taskID *string, err error) {
	err = t.tx.QueryRow(ctx, `SELECT conversation_id, task_id FROM conversation_events WHERE id = $1 AND mode = 'handed_off'`, id).
		Scan(&conversationID, &taskID)
	if err != nil {
		return 0, "", nil, fmt.Errorf("store.TakeHandoff(%d): %w", id, notFound(err))
	}
	err = t.tx.QueryRow(ctx, `
		WITH taken AS (
			INSERT INTO handoff_assignments (conversation_event_id, user_id, taken_at)
			SELECT id, $2, $3 FROM conversation_events WHERE id = $1 AND mode = 'handed_off'
			ON CONFLICT (conversation_event_id) DO NOTHING
			RETURNING user_id
		)
		SELECT user_id FROM taken
		UNION ALL
		SELECT user_id FROM handoff_assignments WHERE conversation_event_id = $1 AND NOT EXISTS (SELECT 1 FROM taken)`,
		id, userID, at).Scan(&takenBy)
	if err != nil {
		return 0, "", nil, fmt.Errorf("store.TakeHandoff(%d): %w", id, notFound(err))
	}
	return takenBy, conversationID, taskID, nil
}
