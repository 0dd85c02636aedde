package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// HandoffTakeover is a row of handoff_takeovers: a manager took over a
// conversation another person held, with a reason.
type HandoffTakeover struct {
	HandoffID int64     `db:"handoff_id"`
	FromID    int64     `db:"from_user_id"`
	FromName  string    `db:"from_name"`
	ToID      int64     `db:"to_user_id"`
	ToName    string    `db:"to_name"`
	Reason    string    `db:"reason"`
	At        time.Time `db:"at"`
}

// TakeOverHandoffs moves the conversation's open hand-offs from whoever
// holds them to userID (call LockHandoffs first: fromID is its holder),
// assigns those nobody took yet, and records the take-over against
// handoffID, the newest open hand-off.
func (t *Tx) TakeOverHandoffs(ctx context.Context, conversationID string, handoffID, fromID, userID int64, reason string, at time.Time) error {
	// The assignment is the record; handoffs_open mirrors it for the list.
	if _, err := t.tx.Exec(ctx, `
		WITH moved AS (
			UPDATE handoff_assignments h SET user_id = $2, taken_at = $3 FROM handoffs_open o
			WHERE o.conversation_id = $1 AND h.conversation_event_id = o.conversation_event_id
			RETURNING h.conversation_event_id
		)
		UPDATE handoffs_open o SET taken_by = $2, taken_at = $3 FROM moved m WHERE o.conversation_event_id = m.conversation_event_id`,
		conversationID, userID, at); err != nil {
		return fmt.Errorf("store.TakeOverHandoffs(%s): %w", conversationID, err)
	}
	if _, err := t.tx.Exec(ctx, `INSERT INTO handoff_takeovers (conversation_id, handoff_id, from_user_id, to_user_id, reason, at)
		VALUES ($1, $2, $3, $4, $5, $6)`, conversationID, handoffID, fromID, userID, reason, at); err != nil {
		return fmt.Errorf("store.TakeOverHandoffs(%s): record: %w", conversationID, err)
	}
	_, err := t.AssignHandoffs(ctx, conversationID, userID, at)
	return err
}

// HandoffTakeovers lists a conversation's take-overs, oldest first.
func (s *Store) HandoffTakeovers(ctx context.Context, conversationID string) ([]HandoffTakeover, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT t.handoff_id, t.from_user_id, f.name AS from_name, t.to_user_id, u.name AS to_name, t.reason, t.at
		FROM handoff_takeovers t JOIN users f ON f.id = t.from_user_id JOIN users u ON u.id = t.to_user_id
		WHERE t.conversation_id = $1 ORDER BY t.at, t.id`, conversationID)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[HandoffTakeover])
	if err != nil {
		return nil, fmt.Errorf("store.HandoffTakeovers(%s): %w", conversationID, err)
	}
	return out, nil
}

// OpenTakeover returns the latest take-over of the conversation's open
// hand-offs (call LockHandoffs first); none is ErrNotFound.
func (t *Tx) OpenTakeover(ctx context.Context, conversationID string) (HandoffTakeover, error) {
	rows, _ := t.tx.Query(ctx, `
		SELECT t.handoff_id, t.from_user_id, f.name AS from_name, t.to_user_id, u.name AS to_name, t.reason, t.at
		FROM handoff_takeovers t JOIN handoffs_open o ON o.conversation_event_id = t.handoff_id
			JOIN users f ON f.id = t.from_user_id JOIN users u ON u.id = t.to_user_id
		WHERE t.conversation_id = $1 ORDER BY t.at DESC, t.id DESC LIMIT 1`, conversationID)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[HandoffTakeover])
	if err != nil {
		return HandoffTakeover{}, fmt.Errorf("store.OpenTakeover(%s): %w", conversationID, notFound(err, "take-over"))
	}
	return out, nil
}
