package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// WaitingStates are the states in which an invocation waits for a person:
// its customer's confirmation, or an agent's approval (the first of two
// approvals included).
var WaitingStates = []string{"awaiting_confirmation", "awaiting_approval"}

// WaitingOfTask is one invocation waiting for a person, as it was when it
// was locked or listed.
type WaitingOfTask struct {
	ID      string `db:"id"`
	TaskID  string `db:"task_id"`
	State   string `db:"state"`
	Version int32  `db:"version"`
}

// The two forms of LockWaitingOfTask's statement, each a constant so it is
// prepared like every other.
const (
	lockWaitingSQL = `SELECT id, task_id, state, version FROM invocations WHERE task_id = $1 AND state = ANY($2)
		ORDER BY id FOR UPDATE`
	lockWaitingSkipSQL = `SELECT id, task_id, state, version FROM invocations WHERE task_id = $1 AND state = ANY($2)
		ORDER BY id FOR UPDATE SKIP LOCKED`
)

// LockWaitingOfTask locks the task's invocations that wait for a person
// and returns them as they are once locked. With skipLocked false it waits
// for a transaction deciding one of them to end (call it before taking the
// task's lock: a decision locks the invocation, then the task); with
// skipLocked true it passes over those another transaction holds.
func (t *Tx) LockWaitingOfTask(ctx context.Context, taskID string, skipLocked bool) ([]WaitingOfTask, error) {
	q := lockWaitingSQL
	if skipLocked {
		q = lockWaitingSkipSQL
	}
	rows, _ := t.tx.Query(ctx, q, taskID, WaitingStates)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[WaitingOfTask])
	if err != nil {
		return nil, fmt.Errorf("store.LockWaitingOfTask(%s): %w", taskID, err)
	}
	return out, nil
}

// ReleaseClaims lets go of every agent's claim on the given invocations'
// cards: a card that left the queue is nobody's work.
func (t *Tx) ReleaseClaims(ctx context.Context, invocationIDs []string) error {
	if len(invocationIDs) == 0 {
		return nil
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM approval_claims WHERE invocation_id = ANY($1)`, invocationIDs); err != nil {
		return fmt.Errorf("store.ReleaseClaims: %w", err)
	}
	return nil
}

// WaitingOfCancelledTasks lists up to limit invocations still waiting for a
// person whose task is cancelled; the sweep withdraws them.
func (s *Store) WaitingOfCancelledTasks(ctx context.Context, limit int) ([]WaitingOfTask, error) {
	rows, _ := s.pool.Query(ctx, `SELECT i.id, i.task_id, i.state, i.version FROM invocations i JOIN tasks t ON t.id = i.task_id
		WHERE i.state = ANY($1) AND t.state = 'cancelled' ORDER BY i.id LIMIT $2`, pgx.QueryExecModeExec, WaitingStates, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[WaitingOfTask])
	if err != nil {
		return nil, fmt.Errorf("store.WaitingOfCancelledTasks: %w", err)
	}
	return out, nil
}
