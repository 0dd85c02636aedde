package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// HandoffHold is where a conversation's hand-offs stand once locked: how
// many are still open (neither resolved nor given back) and who holds them
// (nil while nobody took them).
type HandoffHold struct {
	ConversationID string
	TaskID         *string
	AssistantID    string
	Open           int
	HolderID       *int64
	HolderName     string
	// FirstOpenAt is when the first open hand-off was made; TakenAt when
	// its holder took it.
	FirstOpenAt *time.Time
	TakenAt     *time.Time
	// LatestID is the newest open hand-off's id.
	LatestID *int64
}

// LockHandoffs locks the hand-offs of the conversation the hand-off id
// belongs to, in id order, so that two people taking, resolving or giving
// it back at once are serialised, and says where they stand. A missing
// hand-off is ErrNotFound.
func (t *Tx) LockHandoffs(ctx context.Context, id int64) (HandoffHold, error) {
	var h HandoffHold
	err := t.tx.QueryRow(ctx, `SELECT conversation_id, assistant_id FROM conversation_events WHERE id = $1 AND mode = 'handed_off'`, id).
		Scan(&h.ConversationID, &h.AssistantID)
	if err != nil {
		return h, fmt.Errorf("store.LockHandoffs(%d): %w", id, notFound(err, "hand-off"))
	}
	if _, err := t.tx.Exec(ctx, `SELECT 1 FROM conversation_events WHERE conversation_id = $1 AND mode = 'handed_off'
		ORDER BY id FOR UPDATE`, h.ConversationID); err != nil {
		return h, fmt.Errorf("store.LockHandoffs(%d): lock: %w", id, err)
	}
	err = t.tx.QueryRow(ctx, `
		SELECT count(*), (array_agg(e.taken_by ORDER BY e.taken_at, e.conversation_event_id) FILTER (WHERE e.taken_by IS NOT NULL))[1],
			(array_agg(e.task_id ORDER BY e.at DESC, e.conversation_event_id DESC) FILTER (WHERE e.task_id IS NOT NULL))[1], min(e.at),
			min(e.taken_at), (array_agg(e.conversation_event_id ORDER BY e.at DESC, e.conversation_event_id DESC))[1]
		FROM handoffs_open e WHERE e.conversation_id = $1`, h.ConversationID).
		Scan(&h.Open, &h.HolderID, &h.TaskID, &h.FirstOpenAt, &h.TakenAt, &h.LatestID)
	if err != nil {
		return h, fmt.Errorf("store.LockHandoffs(%d): %w", id, err)
	}
	if h.HolderID != nil {
		if err := t.tx.QueryRow(ctx, `SELECT name FROM users WHERE id = $1`, *h.HolderID).Scan(&h.HolderName); err != nil {
			return h, fmt.Errorf("store.LockHandoffs(%d): holder: %w", id, err)
		}
	}
	return h, nil
}

// AssignHandoffs assigns the conversation's open hand-offs nobody holds to
// userID (call LockHandoffs first), and returns how many it assigned.
func (t *Tx) AssignHandoffs(ctx context.Context, conversationID string, userID int64, at time.Time) (int64, error) {
	// The assignment is the record; handoffs_open mirrors it for the list.
	tag, err := t.tx.Exec(ctx, `
		WITH taken AS (
			INSERT INTO handoff_assignments (conversation_event_id, user_id, taken_at)
			SELECT ho.conversation_event_id, $2, $3 FROM handoffs_open ho WHERE ho.conversation_id = $1
			ORDER BY ho.conversation_event_id
			ON CONFLICT (conversation_event_id) DO NOTHING
			RETURNING conversation_event_id, user_id, taken_at
		)
		UPDATE handoffs_open ho SET taken_by = t.user_id, taken_at = t.taken_at FROM taken t
		WHERE ho.conversation_event_id = t.conversation_event_id`, conversationID, userID, at)
	if err != nil {
		return 0, fmt.Errorf("store.AssignHandoffs(%s): %w", conversationID, err)
	}
	return tag.RowsAffected(), t.refreshHandoffQueue(ctx, conversationID)
}

// CloseHandoffs closes the conversation's open hand-offs with outcome
// ("resolved" or "given_back") by userID with a note (call LockHandoffs
// and AssignHandoffs first): each is recorded in handoff_closures and
// leaves handoffs_open. It returns how many it closed: none when someone
// closed them first.
func (t *Tx) CloseHandoffs(ctx context.Context, conversationID, outcome string, userID int64, note string, at time.Time) (int64, error) {
	// Closed, a hand-off leaves handoffs_open in the same statement.
	tag, err := t.tx.Exec(ctx, `
		WITH closed AS (
			INSERT INTO handoff_closures (conversation_event_id, outcome, user_id, note, at)
			SELECT ho.conversation_event_id, $2, $3, $4, $5 FROM handoffs_open ho WHERE ho.conversation_id = $1
			ORDER BY ho.conversation_event_id
			ON CONFLICT (conversation_event_id) DO NOTHING
			RETURNING conversation_event_id
		)
		DELETE FROM handoffs_open ho USING closed c WHERE ho.conversation_event_id = c.conversation_event_id`,
		conversationID, outcome, userID, note, at)
	if err != nil {
		return 0, fmt.Errorf("store.CloseHandoffs(%s): %w", conversationID, err)
	}
	return tag.RowsAffected(), t.refreshHandoffQueue(ctx, conversationID)
}

// refreshHandoffQueue recomputes the conversation's handoff_queue row from
// its open hand-offs (none: no row).
func (t *Tx) refreshHandoffQueue(ctx context.Context, conversationID string) error {
	if _, err := t.tx.Exec(ctx, `SELECT handoff_queue_refresh(ARRAY[$1::text])`, conversationID); err != nil {
		return fmt.Errorf("store.refreshHandoffQueue(%s): %w", conversationID, err)
	}
	return nil
}

// ConversationEntry is one event an assistant reported in a conversation,
// with, for a hand-off, who took it and how it ended.
type ConversationEntry struct {
	ID           int64           `db:"id"`
	AssistantID  string          `db:"assistant_id"`
	TaskID       *string         `db:"task_id"`
	Intent       string          `db:"intent"`
	Mode         string          `db:"mode"`
	At           time.Time       `db:"at"`
	Data         json.RawMessage `db:"data"`
	TakenBy      *int64          `db:"taken_by"`
	TakenByName  *string         `db:"taken_by_name"`
	TakenAt      *time.Time      `db:"taken_at"`
	Outcome      *string         `db:"outcome"`
	ClosedBy     *int64          `db:"closed_by"`
	ClosedByName *string         `db:"closed_by_name"`
	ClosedAt     *time.Time      `db:"closed_at"`
	Note         *string         `db:"note"`
}

// HandoffConversation returns the conversation a hand-off belongs to; a
// missing hand-off is ErrNotFound.
func (s *Store) HandoffConversation(ctx context.Context, id int64) (string, error) {
	var conv string
	err := s.pool.QueryRow(ctx, `SELECT conversation_id FROM conversation_events WHERE id = $1 AND mode = 'handed_off'`, id).Scan(&conv)
	if err != nil {
		return "", fmt.Errorf("store.HandoffConversation(%d): %w", id, notFound(err, "hand-off"))
	}
	return conv, nil
}

// ConversationLog lists a conversation's events oldest first, at most
// limit of the newest, each hand-off with its taker and its closure.
func (s *Store) ConversationLog(ctx context.Context, conversationID string, limit int) ([]ConversationEntry, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT * FROM (
			SELECT e.id, e.assistant_id, e.task_id, e.intent, e.mode, e.at, e.data,
				h.user_id AS taken_by, hu.name AS taken_by_name, h.taken_at,
				c.outcome, c.user_id AS closed_by, cu.name AS closed_by_name, c.at AS closed_at, c.note
			FROM conversation_events e
			LEFT JOIN handoff_assignments h ON h.conversation_event_id = e.id
			LEFT JOIN users hu ON hu.id = h.user_id
			LEFT JOIN handoff_closures c ON c.conversation_event_id = e.id
			LEFT JOIN users cu ON cu.id = c.user_id
			WHERE e.conversation_id = $1
			ORDER BY e.at DESC, e.id DESC LIMIT $2) x
		ORDER BY at, id`, conversationID, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[ConversationEntry])
	if err != nil {
		return nil, fmt.Errorf("store.ConversationLog(%s): %w", conversationID, err)
	}
	return out, nil
}

const conversationTask = `SELECT id FROM tasks WHERE conversation_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`

// ConversationTask returns the newest task opened for a conversation; none
// is ErrNotFound.
func (s *Store) ConversationTask(ctx context.Context, conversationID string) (string, error) {
	var id string
	if err := s.pool.QueryRow(ctx, conversationTask, conversationID).Scan(&id); err != nil {
		return "", fmt.Errorf("store.ConversationTask(%s): %w", conversationID, notFound(err, "task"))
	}
	return id, nil
}

// ConversationTask is Store.ConversationTask in the transaction.
func (t *Tx) ConversationTask(ctx context.Context, conversationID string) (string, error) {
	var id string
	if err := t.tx.QueryRow(ctx, conversationTask, conversationID).Scan(&id); err != nil {
		return "", fmt.Errorf("store.ConversationTask(%s): %w", conversationID, notFound(err, "task"))
	}
	return id, nil
}

// ConversationOwner returns the assistant a conversation id belongs to;
// an unknown one is ErrNotFound.
func (s *Store) ConversationOwner(ctx context.Context, conversationID string) (string, error) {
	var owner string
	err := s.pool.QueryRow(ctx, `SELECT assistant_id FROM conversations WHERE id = $1`, conversationID).Scan(&owner)
	if err != nil {
		return "", fmt.Errorf("store.ConversationOwner(%s): %w", conversationID, notFound(err, "conversation"))
	}
	return owner, nil
}

// HandoffData returns a hand-off's data (its summary, facts and draft) and
// the task it named; a missing hand-off is ErrNotFound.
func (t *Tx) HandoffData(ctx context.Context, id int64) (json.RawMessage, *string, error) {
	var data json.RawMessage
	var task *string
	err := t.tx.QueryRow(ctx, `SELECT data, task_id FROM conversation_events WHERE id = $1 AND mode = 'handed_off'`, id).Scan(&data, &task)
	if err != nil {
		return nil, nil, fmt.Errorf("store.HandoffData(%d): %w", id, notFound(err, "hand-off"))
	}
	return data, task, nil
}

// ResolveLoadedHandoffs records the open hand-offs of the conversations
// whose ids start with conversationPrefix as taken and resolved by userID
// with note, five and ten minutes after each was made (never after now),
// for history loaded in bulk (the demo's): a console people look after
// has no weeks-old hand-off waiting.
func (s *Store) ResolveLoadedHandoffs(ctx context.Context, conversationPrefix string, userID int64, note string, now time.Time) error {
	return s.InTx(ctx, func(t *Tx) error {
		if _, err := t.tx.Exec(ctx, `
			WITH taken AS (
				INSERT INTO handoff_assignments (conversation_event_id, user_id, taken_at)
				SELECT conversation_event_id, $2, least(at + interval '5 minutes', $3) FROM handoffs_open WHERE starts_with(conversation_id, $1)
				ON CONFLICT (conversation_event_id) DO NOTHING
				RETURNING conversation_event_id
			)
			INSERT INTO handoff_closures (conversation_event_id, outcome, user_id, note, at)
			SELECT o.conversation_event_id, 'resolved', $2, $4, least(o.at + interval '10 minutes', $3)
			FROM handoffs_open o JOIN taken USING (conversation_event_id)
			ON CONFLICT (conversation_event_id) DO NOTHING`, conversationPrefix, userID, now, note); err != nil {
			return fmt.Errorf("store.ResolveLoadedHandoffs(%s): %w", conversationPrefix, err)
		}
		if _, err := t.tx.Exec(ctx, `DELETE FROM handoffs_open o USING handoff_closures c
			WHERE starts_with(o.conversation_id, $1) AND c.conversation_event_id = o.conversation_event_id`, conversationPrefix); err != nil {
			return fmt.Errorf("store.ResolveLoadedHandoffs(%s): %w", conversationPrefix, err)
		}
		// A statement of its own: the refresh reads what the delete left.
		if _, err := t.tx.Exec(ctx, `SELECT handoff_queue_refresh(array_agg(conversation_id)) FROM handoff_queue
			WHERE starts_with(conversation_id, $1)`, conversationPrefix); err != nil {
			return fmt.Errorf("store.ResolveLoadedHandoffs(%s): queue: %w", conversationPrefix, err)
		}
		return nil
	})
}
