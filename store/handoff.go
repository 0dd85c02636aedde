package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

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
	if takenBy == userID {
		// Identical hand-offs of the conversation are one piece of work: the
		// taker takes them all (those nobody took yet).
		_, err = t.tx.Exec(ctx, `
			INSERT INTO handoff_assignments (conversation_event_id, user_id, taken_at)
			SELECT e.id, $2, $3 FROM conversation_events e JOIN conversation_events r ON r.id = $1
			WHERE e.mode = 'handed_off' AND e.id <> r.id AND e.conversation_id = r.conversation_id
			  AND e.task_id IS NOT DISTINCT FROM r.task_id AND e.intent = r.intent AND e.data = r.data
			ON CONFLICT (conversation_event_id) DO NOTHING`, id, userID, at)
		if err != nil {
			return 0, "", nil, fmt.Errorf("store.TakeHandoff(%d): identical ones: %w", id, err)
		}
	}
	return takenBy, conversationID, taskID, nil
}

// HandoffGroup is a set of identical hand-offs (same conversation, task,
// intent and prepared data) with the same taker: one piece of work, shown
// once. ID is the first hand-off's.
type HandoffGroup struct {
	ID             int64           `db:"id"`
	ConversationID string          `db:"conversation_id"`
	AssistantID    string          `db:"assistant_id"`
	TaskID         *string         `db:"task_id"`
	Intent         string          `db:"intent"`
	Data           json.RawMessage `db:"data"`
	Count          int64           `db:"n"`
	FirstAt        time.Time       `db:"first_at"`
	LastAt         time.Time       `db:"last_at"`
	TakenBy        *int64          `db:"taken_by"`
	TakenByName    *string         `db:"taken_by_name"`
	TakenAt        *time.Time      `db:"taken_at"`
	Taken          int32           `db:"taken"`
}

// HandoffFilter selects a page of hand-off groups: Status "" (all),
// "waiting", "taken" or "mine" (taken by UserID); Intent one intent.
type HandoffFilter struct {
	Status string
	Intent string
	UserID int64
	After  *HandoffCursor
	Limit  int
}

// HandoffCursor is where a page of hand-offs ended: waiting before taken,
// then the longest waiting first.
type HandoffCursor struct {
	Taken   int32
	FirstAt time.Time
	ID      int64
}

// HandoffCounts are the hand-off list's totals: Total and Before for the
// filtered list, the rest per filter (groups, not events).
type HandoffCounts struct {
	Total, Before, All, Waiting, Taken, Mine int64
	// Intents counts waiting groups per intent.
	Intents map[string]int64
}

const handoffGroups = `
WITH g AS (
	SELECT min(e.id) AS id, e.conversation_id, min(e.assistant_id) AS assistant_id, e.task_id, e.intent, e.data,
		count(*) AS n, min(e.at) AS first_at, max(e.at) AS last_at, h.user_id AS taken_by, max(h.taken_at) AS taken_at,
		(h.user_id IS NOT NULL)::int AS taken
	FROM conversation_events e
	LEFT JOIN handoff_assignments h ON h.conversation_event_id = e.id
	WHERE e.mode = 'handed_off'
	GROUP BY e.conversation_id, e.task_id, e.intent, e.data, h.user_id
)`

// $1 status, $2 user, $3 intent.
const handoffWhere = `
	(CASE $1::text WHEN '' THEN true WHEN 'waiting' THEN g.taken_by IS NULL WHEN 'taken' THEN g.taken_by IS NOT NULL
		WHEN 'mine' THEN g.taken_by = $2::bigint ELSE false END)
	AND ($3::text = '' OR g.intent = $3)`

// $4 taken, $5 first_at, $6 id.
const handoffAfter = `((g.taken, g.first_at, g.id) > ($4::int, $5::timestamptz, $6::bigint))`

func (f HandoffFilter) args() []any {
	var taken int32 = -1
	var at time.Time
	var id int64
	if f.After != nil {
		taken, at, id = f.After.Taken, f.After.FirstAt, f.After.ID
	}
	return []any{f.Status, f.UserID, f.Intent, taken, at, id}
}

// HandoffGroups lists a page of hand-off groups: waiting ones first, the
// longest waiting first. Keyset paging: no OFFSET.
func (s *Store) HandoffGroups(ctx context.Context, f HandoffFilter) ([]HandoffGroup, error) {
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	rows, _ := s.pool.Query(ctx, handoffGroups+`
		SELECT g.id, g.conversation_id, g.assistant_id, g.task_id, g.intent, g.data, g.n, g.first_at, g.last_at,
			g.taken_by, u.name AS taken_by_name, g.taken_at, g.taken
		FROM g LEFT JOIN users u ON u.id = g.taken_by
		WHERE `+handoffWhere+` AND `+handoffAfter+`
		ORDER BY g.taken, g.first_at, g.id
		LIMIT $7`, append(f.args(), f.Limit)...)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[HandoffGroup])
	if err != nil {
		return nil, fmt.Errorf("store.HandoffGroups: %w", err)
	}
	return out, nil
}

// HandoffCounts counts hand-off groups: the filtered total and those before
// the cursor, and per filter.
func (s *Store) HandoffCounts(ctx context.Context, f HandoffFilter) (HandoffCounts, error) {
	c := HandoffCounts{Intents: map[string]int64{}}
	err := s.pool.QueryRow(ctx, handoffGroups+`
		SELECT count(*) FILTER (WHERE `+handoffWhere+`),
			count(*) FILTER (WHERE `+handoffWhere+` AND $4::int >= 0 AND NOT `+handoffAfter+`),
			count(*), count(*) FILTER (WHERE taken_by IS NULL), count(*) FILTER (WHERE taken_by IS NOT NULL),
			count(*) FILTER (WHERE taken_by = $2::bigint)
		FROM g`, f.args()...).Scan(&c.Total, &c.Before, &c.All, &c.Waiting, &c.Taken, &c.Mine)
	if err != nil {
		return c, fmt.Errorf("store.HandoffCounts: %w", err)
	}
	rows, _ := s.pool.Query(ctx, handoffGroups+` SELECT intent, count(*) FROM g WHERE taken_by IS NULL GROUP BY intent`)
	var intent string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&intent, &n}, func() error { c.Intents[intent] = n; return nil }); err != nil {
		return c, fmt.Errorf("store.HandoffCounts: intents: %w", err)
	}
	return c, nil
}
