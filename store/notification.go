package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DueNotice is something a person should hear about: a card that arrived
// in the approval queue, one close to its deadline, or an invocation whose
// result is unknown.
type DueNotice struct {
	InvocationID  string     `db:"invocation_id"`
	TaskID        string     `db:"task_id"`
	Kind          string     `db:"kind"`
	TargetDisplay string     `db:"target_display"`
	Action        string     `db:"action"`
	Title         string     `db:"title"`
	DeadlineAt    *time.Time `db:"deadline_at"`
}

// DueNotices lists notices not yet sent: cards that arrived since
// arrivedSince, cards whose deadline falls before deadlineBefore, and
// invocations that became unverified since unverifiedSince. Older work is
// not announced, so a first start does not flood anyone.
func (s *Store) DueNotices(ctx context.Context, arrivedSince, deadlineBefore, unverifiedSince time.Time, limit int) ([]DueNotice, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT i.id AS invocation_id, i.task_id, k.kind, i.target_display, i.action, i.quote->>'title' AS title, i.deadline_at
		FROM invocations i
		CROSS JOIN LATERAL (VALUES
			(CASE WHEN i.state = 'awaiting_approval' AND i.created_at >= $1 THEN 'arrived' END),
			(CASE WHEN i.state = 'awaiting_approval' AND i.deadline_at < $2 THEN 'deadline' END),
			(CASE WHEN i.state = 'unverified' AND i.updated_at >= $3 THEN 'unverified' END)) AS k(kind)
		WHERE ((i.state = 'awaiting_approval' AND (i.created_at >= $1 OR i.deadline_at < $2))
		       OR (i.state = 'unverified' AND i.updated_at >= $3))
		  AND k.kind IS NOT NULL
		  AND NOT EXISTS (SELECT 1 FROM notifications_sent n WHERE n.invocation_id = i.id AND n.kind = k.kind)
		ORDER BY i.updated_at
		LIMIT $4`, arrivedSince, deadlineBefore, unverifiedSince, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[DueNotice])
	if err != nil {
		return nil, fmt.Errorf("store.DueNotices: %w", err)
	}
	return out, nil
}

// ClaimNotice records that a notice is being sent; false means another
// instance claimed it first and this one must not send it.
func (s *Store) ClaimNotice(ctx context.Context, invocationID, kind string, at time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO notifications_sent (invocation_id, kind, at) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, invocationID, kind, at)
	if err != nil {
		return false, fmt.Errorf("store.ClaimNotice(%s, %s): %w", invocationID, kind, err)
	}
	return tag.RowsAffected() == 1, nil
}
