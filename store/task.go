package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Task is a row of tasks.
type Task struct {
	ID             string    `db:"id"`
	AssistantID    *string   `db:"assistant_id"`
	CustomerRef    string    `db:"customer_ref"`
	ConversationID string    `db:"conversation_id"`
	Systems        []string  `db:"systems"`
	AllowedActions []string  `db:"allowed_actions"`
	WriteBudget    int32     `db:"write_budget"`
	WritesUsed     int32     `db:"writes_used"`
	InflightLimit  int32     `db:"inflight_limit"`
	RatePerMinute  int32     `db:"rate_per_minute"`
	ExpiresAt      time.Time `db:"expires_at"`
	State          string    `db:"state"`
	Version        int32     `db:"version"`
	CreatedAt      time.Time `db:"created_at"`
	UpdatedAt      time.Time `db:"updated_at"`
	// PausedByKind and PausedByID say who paused a paused task (an actor
	// kind of the events table and its id); nil otherwise.
	PausedByKind *string `db:"paused_by_kind"`
	PausedByID   *string `db:"paused_by_id"`
}

const taskColumns = `id, assistant_id, customer_ref, conversation_id, systems, allowed_actions, write_budget,
	writes_used, inflight_limit, rate_per_minute, expires_at, state, version, created_at, updated_at,
	paused_by_kind, paused_by_id`

// InsertTask creates a task.
func (t *Tx) InsertTask(ctx context.Context, task Task) (Task, error) {
	rows, _ := t.tx.Query(ctx, `
		INSERT INTO tasks (id, assistant_id, customer_ref, conversation_id, systems, allowed_actions, write_budget,
			inflight_limit, rate_per_minute, expires_at, state, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
		RETURNING `+taskColumns,
		task.ID, task.AssistantID, task.CustomerRef, task.ConversationID, task.Systems, task.AllowedActions,
		task.WriteBudget, task.InflightLimit, task.RatePerMinute, task.ExpiresAt, task.State, task.CreatedAt)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Task])
	if err != nil {
		return Task{}, fmt.Errorf("store.InsertTask: %w", err)
	}
	return out, nil
}

// Task loads a task.
func (s *Store) Task(ctx context.Context, id string) (Task, error) {
	return task(ctx, s.pool, id, "")
}

// Task loads a task inside a transaction.
func (t *Tx) Task(ctx context.Context, id string) (Task, error) {
	return task(ctx, t.tx, id, "")
}

// LockTask loads a task and locks its row until the transaction ends.
// Permits and pauses both take this lock, which is what makes "no permit
// after the pause commits" true.
func (t *Tx) LockTask(ctx context.Context, id string) (Task, error) {
	return task(ctx, t.tx, id, " FOR UPDATE")
}

func task(ctx context.Context, db dbtx, id, lock string) (Task, error) {
	rows, _ := db.Query(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = $1`+lock, id)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Task])
	if err != nil {
		return Task{}, fmt.Errorf("store: task %s: %w", id, notFound(err))
	}
	return out, nil
}

// TransitionTask moves a task to state when it is in one of from and at
// expectedVersion (0 skips the version check). Moving to paused records
// by (actor kind and id) as who paused it; any other state clears it. No
// row means an illegal or stale transition: ErrConflict.
func (t *Tx) TransitionTask(ctx context.Context, id string, from []string, expectedVersion int32, state string, at time.Time, byKind, byID string) (Task, error) {
	rows, _ := t.tx.Query(ctx, `
		UPDATE tasks SET state = $3, version = version + 1, updated_at = $4,
			paused_by_kind = CASE WHEN $3 = 'paused' THEN $6 END,
			paused_by_id = CASE WHEN $3 = 'paused' THEN $7 END
		WHERE id = $1 AND state = ANY($2) AND ($5 = 0 OR version = $5)
		RETURNING `+taskColumns, id, from, state, at, expectedVersion, byKind, byID)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Task])
	if err == pgx.ErrNoRows {
		return Task{}, fmt.Errorf("store.TransitionTask(%s → %s): %w", id, state, ErrConflict)
	}
	if err != nil {
		return Task{}, fmt.Errorf("store.TransitionTask(%s → %s): %w", id, state, err)
	}
	return out, nil
}

// UseWrite spends one write of the task's budget; the CHECK constraint
// makes overspending impossible even for a caller that forgot to look.
func (t *Tx) UseWrite(ctx context.Context, id string, at time.Time) error {
	if _, err := t.tx.Exec(ctx, `UPDATE tasks SET writes_used = writes_used + 1, updated_at = $2 WHERE id = $1`, id, at); err != nil {
		return fmt.Errorf("store.UseWrite(%s): %w", id, err)
	}
	return nil
}

// TaskLoad counts a task's invocations holding a permit now and the
// permits granted since a time.
func (t *Tx) TaskLoad(ctx context.Context, id string, since time.Time) (inflight, permitsSince int, err error) {
	err = t.tx.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE state = 'dispatching'), count(*) FILTER (WHERE permit_at >= $2)
		FROM invocations WHERE task_id = $1 AND (state = 'dispatching' OR permit_at >= $2)`, id, since).
		Scan(&inflight, &permitsSince)
	if err != nil {
		return 0, 0, fmt.Errorf("store.TaskLoad(%s): %w", id, err)
	}
	return inflight, permitsSince, nil
}

// TaskFilter selects tasks for the agents' list.
type TaskFilter struct {
	Query string // customer or conversation, prefix match
	State string
	Limit int
}

// Tasks lists tasks, those with unverified or not-dispatched work first.
func (s *Store) Tasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	rows, _ := s.pool.Query(ctx, `
		SELECT `+taskColumns+` FROM tasks t
		WHERE ($1 = '' OR t.customer_ref ILIKE $1 || '%' OR t.conversation_id ILIKE $1 || '%' OR t.id = $1)
		  AND ($2 = '' OR t.state = $2)
		ORDER BY EXISTS (SELECT 1 FROM invocations i WHERE i.task_id = t.id AND i.state IN ('unverified', 'not_dispatched')) DESC,
		         t.updated_at DESC
		LIMIT $3`, f.Query, f.State, f.Limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Task])
	if err != nil {
		return nil, fmt.Errorf("store.Tasks: %w", err)
	}
	return out, nil
}

// TaskListFilter selects a page of the agents' task list. The search (Query)
// narrows everything, the counts included; State, Action and Need narrow the
// page and its total; After continues after the last row of the page before.
type TaskListFilter struct {
	Query string // customer or conversation, prefix match, or a whole task id
	State string
	// Action keeps tasks with at least one request of this action.
	Action string
	// Need is "" (any), "person" (needs a person), "unverified",
	// "approval", "paused", "handoff" (a hand-off nobody took) or "mine".
	Need string
	// UserID is who asks, for "mine": a card they hold or a hand-off they took.
	UserID int64
	Now    time.Time
	After  *TaskCursor
	Limit  int
}

// TaskCursor is where a page of the task list ended: its order is rank
// (0 a result needs checking, 1 something else needs a person, 2 active,
// 3 ended), then newest change first.
type TaskCursor struct {
	Rank      int32
	UpdatedAt time.Time
	ID        string
}

// TaskListRow is a task with what it needs from a person.
type TaskListRow struct {
	Task
	Unverified       int64 `db:"unverified"`
	AwaitingApproval int64 `db:"awaiting_approval"`
	AwaitingCustomer int64 `db:"awaiting_customer"`
	HandoffsWaiting  int64 `db:"handoffs_waiting"`
	Mine             bool  `db:"mine"`
	Rank             int32 `db:"rank"`
}

// TaskListCounts are the task list's totals: Total and Before for the
// filtered list (Before: rows ahead of the page), the rest per filter under
// the search alone.
type TaskListCounts struct {
	Total, Before                                                 int64
	All, NeedsPerson, Unverified, Approval, Paused, Handoff, Mine int64
	Active, PausedState, Cancelled, Closed                        int64
	// Actions counts tasks per action of their requests.
	Actions map[string]int64
}

// taskListBase is the task list with what each task needs: $1 search, $2 the
// asking user, $3 now.
const taskListBase = `
WITH inv AS (
	SELECT task_id,
		count(*) FILTER (WHERE state = 'unverified') AS unverified,
		count(*) FILTER (WHERE state = 'awaiting_approval') AS awaiting_approval,
		count(*) FILTER (WHERE state = 'awaiting_confirmation') AS awaiting_customer
	FROM invocations WHERE state IN ('unverified', 'awaiting_approval', 'awaiting_confirmation')
	GROUP BY task_id
), ho AS (
	SELECT e.task_id, count(DISTINCT (e.conversation_id, e.intent, e.data::text)) AS handoffs_waiting FROM conversation_events e
	WHERE e.mode = 'handed_off' AND e.task_id IS NOT NULL
	  AND NOT EXISTS (SELECT 1 FROM handoff_assignments h WHERE h.conversation_event_id = e.id)
	GROUP BY e.task_id
), mine AS (
	SELECT i.task_id FROM approval_claims c JOIN invocations i ON i.id = c.invocation_id
	WHERE c.user_id = $2::bigint AND c.expires_at > $3::timestamptz
	UNION
	SELECT e.task_id FROM handoff_assignments h JOIN conversation_events e ON e.id = h.conversation_event_id
	WHERE h.user_id = $2::bigint AND e.task_id IS NOT NULL
), base AS (
	SELECT t.*,
		coalesce(inv.unverified, 0) AS unverified, coalesce(inv.awaiting_approval, 0) AS awaiting_approval,
		coalesce(inv.awaiting_customer, 0) AS awaiting_customer, coalesce(ho.handoffs_waiting, 0) AS handoffs_waiting,
		(mine.task_id IS NOT NULL) AS mine,
		(CASE WHEN coalesce(inv.unverified, 0) > 0 THEN 0
		 WHEN coalesce(inv.awaiting_approval, 0) > 0 OR coalesce(ho.handoffs_waiting, 0) > 0 OR t.state = 'paused' THEN 1
		 WHEN t.state = 'active' THEN 2 ELSE 3 END)::int AS rank
	FROM tasks t
	LEFT JOIN inv ON inv.task_id = t.id
	LEFT JOIN ho ON ho.task_id = t.id
	LEFT JOIN mine ON mine.task_id = t.id
	WHERE ($1::text = '' OR t.customer_ref ILIKE $1 || '%' OR t.conversation_id ILIKE $1 || '%' OR t.id = $1)
)`

// taskListWhere narrows base by $4 state, $5 action, $6 need.
const taskListWhere = `
	($4::text = '' OR state = $4)
	AND ($5::text = '' OR EXISTS (SELECT 1 FROM invocations i WHERE i.task_id = base.id AND i.action = $5))
	AND (CASE $6::text WHEN '' THEN true WHEN 'person' THEN rank <= 1 WHEN 'unverified' THEN unverified > 0
		WHEN 'approval' THEN awaiting_approval > 0 WHEN 'paused' THEN state = 'paused'
		WHEN 'handoff' THEN handoffs_waiting > 0 WHEN 'mine' THEN mine ELSE false END)`

// taskListAfter is true for rows after the cursor $7 rank, $8 updated_at, $9 id.
const taskListAfter = `(rank > $7::int OR (rank = $7::int AND (updated_at, id) < ($8::timestamptz, $9::text)))`

func (f TaskListFilter) args() []any {
	var rank int32 = -1
	var at time.Time
	var id string
	if f.After != nil {
		rank, at, id = f.After.Rank, f.After.UpdatedAt, f.After.ID
	}
	return []any{f.Query, f.UserID, f.Now, f.State, f.Action, f.Need, rank, at, id}
}

// TaskList returns one page of the task list, tasks that need a person
// first (a result to check before anything else, then a card to approve, a
// pause, a hand-off nobody took), then active ones, then ended ones; newest
// change first within each. Keyset paging: no OFFSET.
func (s *Store) TaskList(ctx context.Context, f TaskListFilter) ([]TaskListRow, error) {
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	rows, _ := s.pool.Query(ctx, taskListBase+`
		SELECT `+taskColumns+`, unverified, awaiting_approval, awaiting_customer, handoffs_waiting, mine, rank
		FROM base WHERE `+taskListWhere+` AND `+taskListAfter+`
		ORDER BY rank, updated_at DESC, id DESC
		LIMIT $10`, append(f.args(), f.Limit)...)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[TaskListRow])
	if err != nil {
		return nil, fmt.Errorf("store.TaskList: %w", err)
	}
	return out, nil
}

// TaskListCounts counts the task list: the filtered total and the rows
// before the cursor, and per filter under the search alone.
func (s *Store) TaskListCounts(ctx context.Context, f TaskListFilter) (TaskListCounts, error) {
	var c TaskListCounts
	err := s.pool.QueryRow(ctx, taskListBase+`
		SELECT
			count(*) FILTER (WHERE `+taskListWhere+`),
			count(*) FILTER (WHERE `+taskListWhere+` AND $7::int >= 0 AND NOT `+taskListAfter+`),
			count(*), count(*) FILTER (WHERE rank <= 1), count(*) FILTER (WHERE unverified > 0),
			count(*) FILTER (WHERE awaiting_approval > 0), count(*) FILTER (WHERE state = 'paused'),
			count(*) FILTER (WHERE handoffs_waiting > 0), count(*) FILTER (WHERE mine),
			count(*) FILTER (WHERE state = 'active'), count(*) FILTER (WHERE state = 'paused'),
			count(*) FILTER (WHERE state = 'cancelled'), count(*) FILTER (WHERE state = 'closed')
		FROM base`, f.args()...).Scan(&c.Total, &c.Before, &c.All, &c.NeedsPerson, &c.Unverified, &c.Approval, &c.Paused,
		&c.Handoff, &c.Mine, &c.Active, &c.PausedState, &c.Cancelled, &c.Closed)
	if err != nil {
		return c, fmt.Errorf("store.TaskListCounts: %w", err)
	}
	rows, _ := s.pool.Query(ctx, `
		SELECT i.action, count(DISTINCT i.task_id) FROM invocations i JOIN tasks t ON t.id = i.task_id
		WHERE ($1::text = '' OR t.customer_ref ILIKE $1 || '%' OR t.conversation_id ILIKE $1 || '%' OR t.id = $1)
		GROUP BY i.action ORDER BY i.action`, f.Query)
	c.Actions = map[string]int64{}
	var action string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&action, &n}, func() error { c.Actions[action] = n; return nil })
	if err != nil {
		return c, fmt.Errorf("store.TaskListCounts: actions: %w", err)
	}
	return c, nil
}
