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
// complement of ExpiredLeases); it bumps the version, so a sweep that read
// the row before loses its own guarded transition. No row means the caller
// no longer holds a current lease and must not send: ErrConflict.
func (t *Tx) StartSend(ctx context.Context, id, leaseToken string, now, leaseUntil time.Time) (Invocation, error) {
	rows, _ := t.tx.Query(ctx, `UPDATE invocations SET lease_until = $4, version = version + 1, updated_at = $3
		WHERE id = $1 AND state = 'dispatching' AND lease_token = $2 AND lease_until >= $3
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
