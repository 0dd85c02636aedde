package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Task is a row of tasks.
type Task struct {
	ID             string   `db:"id"`
	AssistantID    *string  `db:"assistant_id"`
	CustomerRef    string   `db:"customer_ref"`
	ConversationID string   `db:"conversation_id"`
	Systems        []string `db:"systems"`
	AllowedActions []string `db:"allowed_actions"`
	WriteBudget    int32    `db:"write_budget"`
	WritesUsed     int32    `db:"writes_used"`
	// ProposalsMade counts the task's proposals (not a re-quote's
	// successor), kept by InsertInvocation.
	ProposalsMade int32     `db:"proposals_made"`
	InflightLimit int32     `db:"inflight_limit"`
	RatePerMinute int32     `db:"rate_per_minute"`
	ExpiresAt     time.Time `db:"expires_at"`
	State         string    `db:"state"`
	Version       int32     `db:"version"`
	CreatedAt     time.Time `db:"created_at"`
	UpdatedAt     time.Time `db:"updated_at"`
	// PausedByKind and PausedByID say who paused a paused task (an actor
	// kind of the events table and its id); nil otherwise.
	PausedByKind *string `db:"paused_by_kind"`
	PausedByID   *string `db:"paused_by_id"`
	// Vouched says how the business stood behind the customer of an
	// assistant's task when it opened ("assertion" or "any_customer"); nil
	// for a task of no assistant. Only such a task makes its
	// conversation's reports count in the metrics.
	Vouched *string `db:"vouched"`
}

const taskColumns = `id, assistant_id, customer_ref, conversation_id, systems, allowed_actions, write_budget,
	writes_used, inflight_limit, rate_per_minute, expires_at, state, version, created_at, updated_at,
	paused_by_kind, paused_by_id, proposals_made, vouched`

// InsertTask creates a task.
func (t *Tx) InsertTask(ctx context.Context, task Task) (Task, error) {
	rows, _ := t.tx.Query(ctx, `
		INSERT INTO tasks (id, assistant_id, customer_ref, conversation_id, systems, allowed_actions, write_budget,
			inflight_limit, rate_per_minute, expires_at, state, created_at, updated_at, vouched)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13)
		RETURNING `+taskColumns,
		task.ID, task.AssistantID, task.CustomerRef, task.ConversationID, task.Systems, task.AllowedActions,
		task.WriteBudget, task.InflightLimit, task.RatePerMinute, task.ExpiresAt, task.State, task.CreatedAt, task.Vouched)
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
		return Task{}, fmt.Errorf("store: task %s: %w", id, notFound(err, "task"))
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
	if errors.Is(err, pgx.ErrNoRows) {
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

const taskLoadSQL = `
		SELECT (SELECT count(*) FROM invocations WHERE task_id = $1 AND state = 'dispatching'),
			(SELECT count(*) FROM invocations WHERE task_id = $1 AND permit_at >= $2 AND permit_at IS NOT NULL)`

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
