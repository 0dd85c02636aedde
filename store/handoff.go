package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// HandoffGroup is one conversation waiting for a person or held by one: its
// hand-offs still open (neither resolved nor given back), one piece of
// work. ID is the first open hand-off's; Intent, Data and AssistantID are
// the latest's; TaskID the latest task any of them named, else the
// conversation's newest task, whose customer CustomerRef is.
type HandoffGroup struct {
	ID             int64           `db:"id"`
	LastID         int64           `db:"last_id"`
	ConversationID string          `db:"conversation_id"`
	AssistantID    string          `db:"assistant_id"`
	TaskID         *string         `db:"task_id"`
	CustomerRef    *string         `db:"customer_ref"`
	Intent         string          `db:"intent"`
	Data           json.RawMessage `db:"data"`
	Count          int64           `db:"n"`
	FirstAt        time.Time       `db:"first_at"`
	LastAt         time.Time       `db:"last_at"`
	TakenBy        *int64          `db:"taken_by"`
	TakenByName    *string         `db:"taken_by_name"`
	TakenAt        *time.Time      `db:"taken_at"`
	Taken          int32           `db:"taken"`
	// Rank is its place among its assistant's conversations in the list
	// (1 for the assistant's longest waiting): the list takes each
	// assistant's first, then each one's second, and so on.
	Rank int64 `db:"rank"`
}

// HandoffFilter selects a page of hand-off groups: Status "" (all),
// "waiting", "taken" or "mine" (taken by UserID); Intent one intent.
// OverSince, for the counts, is the moment a group waiting since before it
// is over its target.
type HandoffFilter struct {
	Status string
	Intent string
	UserID int64
	// After is where the previous page ended; nil for the first page.
	After *HandoffCursor
	// Limit is the page's size: 50 unless between 1 and 200.
	Limit     int
	OverSince time.Time
}

// HandoffCursor is where a page of hand-offs ended: waiting before taken,
// then by the rank within the assistant, then the longest waiting first.
type HandoffCursor struct {
	Taken   int32
	Rank    int64
	FirstAt time.Time
	ID      int64
}

// HandoffCounts are the hand-off list's totals, in conversations: Total and
// Before for the filtered list, the rest per filter; OverTarget counts the
// waiting ones waiting since before HandoffFilter.OverSince.
type HandoffCounts struct {
	Total, Before, All, Waiting, Taken, Mine, OverTarget int64
	// Intents counts waiting groups per intent.
	Intents map[string]int64
	// Busiest is the assistant with the most conversations waiting; zero
	// when none waits.
	Busiest HandoffAssistant
}

// HandoffAssistant is an assistant and how many of its conversations wait
// for a person.
type HandoffAssistant struct {
	ID, Name string
	Waiting  int64
}

// handoffGroups is the one definition of "a conversation waiting for a
// person" that the list, its counts, the home page and the task list's
// badge share: handoff_queue, a row per conversation with open hand-offs
// (migration 00026), taken when any of them is assigned.
const handoffGroups = `WITH g AS (SELECT * FROM handoff_queue)`

// $1 status, $2 user, $3 intent.
const handoffWhere = `
	(CASE $1::text WHEN '' THEN true WHEN 'waiting' THEN g.taken_by IS NULL WHEN 'taken' THEN g.taken_by IS NOT NULL
		WHEN 'mine' THEN g.taken_by = $2::bigint ELSE false END)
	AND ($3::text = '' OR g.intent = $3)`

// handoffRanked is the filtered list, each row ranked among its
// assistant's (waiting and taken apart), oldest first: ordered by that
// rank before age, the list takes one conversation of each assistant in
// turn, so one assistant's flood never keeps another's customers waiting
// behind it, however old the flood is. Within a rank the longest waiting
// come first, so a conversation over its target is ahead of its round.
// Only each assistant's first $9 rows are ranked, through the index on
// (assistant_id, taken, first_at, id): a page after rank k needs none
// ranked past k and the page's size, so a page costs the assistants and
// the page, not every conversation waiting.
const handoffRanked = `WITH r AS (
	SELECT g.* FROM (SELECT a.id AS assistant_id, t.taken FROM assistants a CROSS JOIN (VALUES (0), (1)) t (taken)
		WHERE CASE $1::text WHEN 'waiting' THEN t.taken = 0 WHEN '' THEN true ELSE t.taken = 1 END) p
	CROSS JOIN LATERAL (
		SELECT g.*, row_number() OVER (ORDER BY g.first_at, g.id) AS rank FROM handoff_queue g
		WHERE g.assistant_id = p.assistant_id AND g.taken = p.taken AND ` + handoffWhere + `
		ORDER BY g.first_at, g.id LIMIT $9::bigint) g)`

// handoffOrder is the list's order, the cursor's columns.
const handoffOrder = `g.taken, g.rank, g.first_at, g.id`

// $4 taken, $5 rank, $6 first_at, $7 id.
const handoffAfter = `((` + handoffOrder + `) > ($4::int, $5::bigint, $6::timestamptz, $7::bigint))`

// rankedUpTo is how many of each assistant's rows handoffRanked ranks:
// those up to the cursor's rank, and then the page's.
func (f HandoffFilter) rankedUpTo(page int64) int64 {
	if f.After == nil {
		return page
	}
	return f.After.Rank + page
}

func (f HandoffFilter) args() []any {
	var taken int32 = -1
	var at time.Time
	var rank, id int64
	if f.After != nil {
		taken, rank, at, id = f.After.Taken, f.After.Rank, f.After.FirstAt, f.After.ID
	}
	return []any{f.Status, f.UserID, f.Intent, taken, rank, at, id}
}

// HandoffGroups lists a page of conversations handed to a person: waiting
// ones first, each assistant's in turn (handoffRanked), the longest
// waiting first within a turn. Keyset paging: no OFFSET.
func (s *Store) HandoffGroups(ctx context.Context, f HandoffFilter) ([]HandoffGroup, error) {
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	// The page is chosen first; only its rows are joined to their latest
	// event, task and taker.
	rows, _ := s.pool.Query(ctx, handoffRanked+`
		SELECT g.id, g.last_id, g.conversation_id, l.assistant_id, COALESCE(g.task_id, tc.id) AS task_id,
			COALESCE(tk.customer_ref, tc.customer_ref) AS customer_ref, g.intent, l.data, g.n, g.first_at, g.last_at,
			g.taken_by, u.name AS taken_by_name, g.taken_at, g.taken, g.rank
		FROM (SELECT * FROM r g WHERE `+handoffAfter+` ORDER BY `+handoffOrder+` LIMIT $8) g
		JOIN conversation_events l ON l.id = g.last_id
		LEFT JOIN tasks tk ON tk.id = g.task_id
		LEFT JOIN LATERAL (SELECT t.id, t.customer_ref FROM tasks t WHERE g.task_id IS NULL AND t.conversation_id = g.conversation_id
			ORDER BY t.created_at DESC, t.id DESC LIMIT 1) tc ON true
		LEFT JOIN users u ON u.id = g.taken_by
		ORDER BY `+handoffOrder, append(f.args(), f.Limit, f.rankedUpTo(int64(f.Limit)))...)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[HandoffGroup])
	if err != nil {
		return nil, fmt.Errorf("store.HandoffGroups: %w", err)
	}
	return out, nil
}

// HandoffCounts counts conversations handed to a person: the filtered
// total and those before the cursor, per filter, those waiting past their
// target, and the assistant with the most waiting.
func (s *Store) HandoffCounts(ctx context.Context, f HandoffFilter) (HandoffCounts, error) {
	c := HandoffCounts{Intents: map[string]int64{}}
	// Before the cursor: the filtered rows of an earlier group (waiting
	// before taken), and those of its own group ranked up to it.
	err := s.pool.QueryRow(ctx, handoffRanked+`
		SELECT count(*) FILTER (WHERE `+handoffWhere+`),
			count(*) FILTER (WHERE `+handoffWhere+` AND g.taken < $4::int)
				+ (SELECT count(*) FROM r g WHERE g.taken = $4::int AND NOT `+handoffAfter+`),
			count(*), count(*) FILTER (WHERE taken_by IS NULL), count(*) FILTER (WHERE taken_by IS NOT NULL),
			count(*) FILTER (WHERE taken_by = $2::bigint), count(*) FILTER (WHERE taken_by IS NULL AND first_at < $8)
		FROM handoff_queue g`, append(f.args(), f.OverSince, f.rankedUpTo(0))...).Scan(&c.Total, &c.Before, &c.All, &c.Waiting, &c.Taken, &c.Mine, &c.OverTarget)
	if err != nil {
		return c, fmt.Errorf("store.HandoffCounts: %w", err)
	}
	rows, _ := s.pool.Query(ctx, handoffGroups+` SELECT intent, count(*) FROM g WHERE taken_by IS NULL GROUP BY intent`)
	var intent string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&intent, &n}, func() error { c.Intents[intent] = n; return nil }); err != nil {
		return c, fmt.Errorf("store.HandoffCounts: intents: %w", err)
	}
	err = s.pool.QueryRow(ctx, `SELECT q.assistant_id, COALESCE(a.name, q.assistant_id), count(*) FROM handoff_queue q
		LEFT JOIN assistants a ON a.id = q.assistant_id WHERE q.taken = 0
		GROUP BY q.assistant_id, a.name ORDER BY count(*) DESC, q.assistant_id LIMIT 1`).Scan(&c.Busiest.ID, &c.Busiest.Name, &c.Busiest.Waiting)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("store.HandoffCounts: busiest: %w", err)
	}
	return c, nil
}

// HandoffsWaiting counts the conversations waiting for a person (open
// hand-offs nobody took), as HandoffCounts' Waiting does: the number the
// home page and the task list show.
func (s *Store) HandoffsWaiting(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, handoffGroups+` SELECT count(*) FROM g WHERE taken_by IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store.HandoffsWaiting: %w", err)
	}
	return n, nil
}
