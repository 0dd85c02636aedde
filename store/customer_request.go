package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// InvocationsForCustomer lists the invocations of every task opened for a
// customer, newest first, at most limit of them. It serves the customer's
// "My requests" page.
func (s *Store) InvocationsForCustomer(ctx context.Context, customerRef string, limit int) ([]Invocation, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT `+invocationColumns+` FROM invocations
		WHERE task_id IN (SELECT id FROM tasks WHERE customer_ref = $1)
		ORDER BY created_at DESC, id DESC LIMIT $2`, customerRef, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Invocation])
	if err != nil {
		return nil, fmt.Errorf("store.InvocationsForCustomer(%q): %w", customerRef, err)
	}
	return out, nil
}
