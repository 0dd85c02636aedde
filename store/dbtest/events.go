package dbtest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// CountEvents counts the journal's events of an action in pool's database,
// of one task when taskID is not nil: what a test asks of the journal to
// see that something was (or was not) recorded. Production code reads
// events through the store's own reads.
func CountEvents(ctx context.Context, pool *pgxpool.Pool, action string, taskID *string) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE action = $1 AND ($2::text IS NULL OR task_id = $2)`,
		action, taskID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("dbtest.CountEvents: %w", err)
	}
	return n, nil
}
