package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// LastCustomerLocale is the language customerRef of system last decided
// in, as the audit trail recorded it with their decision (the event's
// data "locale"); "" when none is recorded. A mail the console writes
// with no page to follow is written in it when the business gives no
// language for the customer.
func (s *Store) LastCustomerLocale(ctx context.Context, system, customerRef string) (string, error) {
	var loc string
	err := s.pool.QueryRow(ctx, `SELECT e.data->>'locale' FROM events e JOIN invocations i ON i.id = e.invocation_id
		WHERE e.actor_kind = 'customer' AND e.actor_id = $2 AND e.data ? 'locale' AND i.system = $1
		ORDER BY e.id DESC LIMIT 1`, system, customerRef).Scan(&loc)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store.LastCustomerLocale(%q, %q): %w", system, customerRef, err)
	}
	return loc, nil
}
