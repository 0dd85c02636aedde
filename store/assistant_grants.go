package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AssistantGrants are what an admin allows an assistant's tasks: the
// maxima of their limits, whether it may act for any customer, and
// whether its reports count in the metrics without a vouched task.
type AssistantGrants struct {
	MaxWriteBudget     int32
	MaxInflightLimit   int32
	MaxRatePerMinute   int32
	AnyCustomer        bool
	ReportsWithoutTask bool
}

// SetAssistantGrants changes an assistant's grants and appends the audit
// event e (its data filled by the caller) in one transaction; ErrNotFound
// when there is no such assistant.
func (s *Store) SetAssistantGrants(ctx context.Context, id string, g AssistantGrants, e Event) (Assistant, error) {
	var out Assistant
	err := s.InTx(ctx, func(tx *Tx) error {
		rows, _ := tx.tx.Query(ctx, `UPDATE assistants SET max_write_budget = $2, max_inflight_limit = $3,
			max_rate_per_minute = $4, any_customer = $5, reports_without_task = $6 WHERE id = $1 RETURNING `+assistantColumns,
			id, g.MaxWriteBudget, g.MaxInflightLimit, g.MaxRatePerMinute, g.AnyCustomer, g.ReportsWithoutTask)
		var err error
		if out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Assistant]); err != nil {
			return notFound(err, "assistant")
		}
		_, err = tx.InsertEvent(ctx, e)
		return err
	})
	if err != nil {
		return Assistant{}, fmt.Errorf("store.SetAssistantGrants(%q): %w", id, err)
	}
	return out, nil
}

// SpendCustomerAssertion records, in the transaction that opens a task, the
// nonce of the assertion that vouched for its customer; a nonce spent
// already (by a task or a confirmation) is ErrConflict. Nonces share the
// customer_assertions table with confirmations, so no assertion is ever
// accepted twice whatever it was made for.
func (t *Tx) SpendCustomerAssertion(ctx context.Context, system, nonce, customerRef string, expiresAt, at time.Time) error {
	tag, err := t.tx.Exec(ctx, `INSERT INTO customer_assertions (system, nonce, customer_ref, expires_at, used_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, system, nonce, customerRef, expiresAt, at)
	if err != nil {
		return fmt.Errorf("store.SpendCustomerAssertion: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store.SpendCustomerAssertion: %w", ErrConflict)
	}
	return nil
}
