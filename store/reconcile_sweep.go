package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ReconcilesDue lists, oldest due first and at most limit, the ids of
// unverified invocations whose sweep (reconcile_sweeps) is due at now: it
// has not ended, and either its back-off or a crashed instance's claim
// ran out (next_at), or it has no row yet and the invocation became
// unverified at firstBefore or earlier. Planned at each run (exec mode),
// as the other sweeps are: the table is nearly empty at start-up.
func (s *Store) ReconcilesDue(ctx context.Context, now, firstBefore time.Time, limit int) ([]string, error) {
	rows, _ := s.pool.Query(ctx, `SELECT i.id FROM invocations i
		LEFT JOIN reconcile_sweeps r ON r.invocation_id = i.id
		WHERE i.state = 'unverified' AND r.ended_at IS NULL
		  AND ((r.invocation_id IS NULL AND i.updated_at <= $2) OR r.next_at <= $1)
		ORDER BY coalesce(r.next_at, i.updated_at), i.id
		LIMIT $3`, pgx.QueryExecModeExec, now, firstBefore, limit)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store.ReconcilesDue: %w", err)
	}
	return out, nil
}

// ClaimReconcile takes the next look of invocationID's sweep for the
// caller until leaseUntil and returns which attempt it is and when the
// sweep's first look began. ok is false when the sweep ended, another
// instance holds it, or its back-off has not run out at now. The one
// INSERT … ON CONFLICT makes two instances claiming at once one: the
// second waits for the first's row and finds it taken.
func (s *Store) ClaimReconcile(ctx context.Context, invocationID string, now, leaseUntil time.Time) (attempt int, firstAt time.Time, ok bool, _ error) {
	err := s.pool.QueryRow(ctx, `INSERT INTO reconcile_sweeps AS r (invocation_id, attempts, first_at, next_at, updated_at)
		VALUES ($1, 1, $2, $3, $2)
		ON CONFLICT (invocation_id) DO UPDATE SET attempts = r.attempts + 1, next_at = $3, updated_at = $2
			WHERE r.ended_at IS NULL AND r.next_at <= $2
		RETURNING attempts, first_at`, invocationID, now, leaseUntil).Scan(&attempt, &firstAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, time.Time{}, false, nil
	}
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("store.ClaimReconcile(%s): %w", invocationID, err)
	}
	return attempt, firstAt, true, nil
}

// FinishReconcile records how the look claimed as attempt ended: outcome
// (a code: "completed", "failed", "inconclusive", …), and either ended,
// the sweep stopped for good, or next, the earliest the next look. A
// claim that ran out and was taken again (another attempt) changes
// nothing.
func (s *Store) FinishReconcile(ctx context.Context, invocationID string, attempt int, outcome string, ended bool, next, now time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE reconcile_sweeps SET outcome = $3, next_at = $5, updated_at = $6,
			ended_at = CASE WHEN $4::boolean THEN $6::timestamptz END
		WHERE invocation_id = $1 AND attempts = $2`, invocationID, attempt, outcome, ended, next, now); err != nil {
		return fmt.Errorf("store.FinishReconcile(%s): %w", invocationID, err)
	}
	return nil
}
