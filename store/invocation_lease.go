package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// StartSend restarts an invocation's dispatch lease at now, to run until
// leaseUntil, in one guarded statement run just before its request leaves.
// It matches only while the invocation is still dispatching under
// leaseToken and that lease has not run out (lease_until >= now, the
// complement of ExpiredLeases), and while its task is active and the global
// stop is off. It bumps the version, so a sweep that read the row before
// loses its own guarded transition. No row means the caller must not send:
// ErrConflict (SendGate says whether a pause or the stop was the cause).
//
// The task row and the stop row are read FOR SHARE: a pause (which locks
// the task FOR UPDATE) or a stop being committed makes this statement wait
// and then see its result, and a pause or stop that comes later waits for
// this transaction. So once Pause or the global stop has committed, no
// request starts that was not already started before it.
func (t *Tx) StartSend(ctx context.Context, id, leaseToken string, now, leaseUntil time.Time) (Invocation, error) {
	// The invocation's row first, then the task's: the order a permit
	// takes them in. A permit's claim can keep a lock on a row it then
	// skips (one that became dispatching while it looked) while it waits
	// for the task; holding the task's share lock while waiting for that
	// row would close the circle.
	if _, err := t.tx.Exec(ctx, `SELECT 1 FROM invocations WHERE id = $1 FOR NO KEY UPDATE`, id); err != nil {
		return Invocation{}, fmt.Errorf("store.StartSend(%s): %w", id, err)
	}
	rows, _ := t.tx.Query(ctx, `UPDATE invocations SET lease_until = $4, version = version + 1, updated_at = $3
		WHERE id = $1 AND state = 'dispatching' AND lease_token = $2 AND lease_until >= $3
			AND EXISTS (SELECT 1 FROM tasks WHERE tasks.id = invocations.task_id AND tasks.state = 'active' FOR SHARE)
			AND EXISTS (SELECT 1 FROM controls WHERE NOT stopped FOR SHARE)
		RETURNING `+invocationColumns, id, leaseToken, now, leaseUntil)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Invocation])
	if errors.Is(err, pgx.ErrNoRows) {
		return Invocation{}, fmt.Errorf("store.StartSend(%s): %w", id, ErrConflict)
	}
	if err != nil {
		return Invocation{}, fmt.Errorf("store.StartSend(%s): %w", id, err)
	}
	return out, nil
}

// SendGate is what, besides its own lease, decides whether an invocation's
// request may leave: its task's state and the global stop switch.
type SendGate struct {
	TaskState  string
	GlobalStop bool
}

// SendGate reads the invocation's task state and the stop switch, to say
// why StartSend matched nothing. ErrNotFound when there is no such
// invocation.
func (t *Tx) SendGate(ctx context.Context, id string) (SendGate, error) {
	var g SendGate
	err := t.tx.QueryRow(ctx, `SELECT tasks.state, controls.stopped
		FROM invocations JOIN tasks ON tasks.id = invocations.task_id CROSS JOIN controls
		WHERE invocations.id = $1`, id).Scan(&g.TaskState, &g.GlobalStop)
	if err != nil {
		return SendGate{}, fmt.Errorf("store.SendGate(%s): %w", id, notFound(err, "invocation"))
	}
	return g, nil
}
