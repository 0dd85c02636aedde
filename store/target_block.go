package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// TargetBlock is a row of target_blocks: a target a policy refused, closed
// to the customer's proposals across all their tasks until a person lifts
// it.
type TargetBlock struct {
	CustomerRef string `db:"customer_ref"`
	// TaskID is the task the refusal happened in.
	TaskID    string          `db:"task_id"`
	System    string          `db:"system"`
	TargetID  string          `db:"target_id"`
	Action    string          `db:"action"`
	Error     json.RawMessage `db:"error"`
	CreatedAt time.Time       `db:"created_at"`
	LiftedAt  *time.Time      `db:"lifted_at"`
	LiftedBy  *int64          `db:"lifted_by"`
	// KeyName and KeyValue are the target's business key, when its kind
	// declares one: the block then holds on the business object in every
	// system that reaches it.
	KeyName  *string `db:"business_key_name"`
	KeyValue *string `db:"business_key_value"`
}

const targetBlockColumns = `customer_ref, task_id, system, target_id, action, error, created_at, lifted_at, lifted_by,
	business_key_name, business_key_value`

// BlockTarget records a policy refusal on a customer's target; a block
// already in force is kept as it was.
func (t *Tx) BlockTarget(ctx context.Context, b TargetBlock) error {
	_, err := t.tx.Exec(ctx, `
		INSERT INTO target_blocks (customer_ref, task_id, system, target_id, action, error, created_at,
			business_key_name, business_key_value)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (customer_ref, system, target_id) DO UPDATE
		SET task_id = EXCLUDED.task_id, action = EXCLUDED.action, error = EXCLUDED.error, created_at = EXCLUDED.created_at,
			lifted_at = NULL, lifted_by = NULL, business_key_name = EXCLUDED.business_key_name,
			business_key_value = EXCLUDED.business_key_value
		WHERE target_blocks.lifted_at IS NOT NULL`,
		b.CustomerRef, b.TaskID, b.System, b.TargetID, b.Action, b.Error, b.CreatedAt, b.KeyName, b.KeyValue)
	if err != nil {
		return fmt.Errorf("store.BlockTarget: %w", err)
	}
	return nil
}

// ActiveBlock returns the block in force on a customer's target, whichever
// task it was made in: on the target in its system, or, when keyName names a
// business key, on any target with that key in any system (the oldest).
func (t *Tx) ActiveBlock(ctx context.Context, customerRef, system, targetID, keyName, keyValue string) (TargetBlock, error) {
	return activeBlock(ctx, t.tx, customerRef, system, targetID, keyName, keyValue)
}

// ActiveBlock is Tx.ActiveBlock in a statement of its own.
func (s *Store) ActiveBlock(ctx context.Context, customerRef, system, targetID, keyName, keyValue string) (TargetBlock, error) {
	return activeBlock(ctx, s.pool, customerRef, system, targetID, keyName, keyValue)
}

const activeBlockSQL = `SELECT ` + targetBlockColumns + `
		FROM target_blocks WHERE customer_ref = $1 AND lifted_at IS NULL
			AND (system = $2 AND target_id = $3 OR business_key_name = $4 AND business_key_value = $5)
		ORDER BY created_at, system, target_id LIMIT 1`

func activeBlock(ctx context.Context, db dbtx, customerRef, system, targetID, keyName, keyValue string) (TargetBlock, error) {
	rows, _ := db.Query(ctx, activeBlockSQL, customerRef, system, targetID, keyName, keyValue)
	b, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[TargetBlock])
	if err != nil {
		return TargetBlock{}, fmt.Errorf("store.ActiveBlock: %w", notFound(err, "block"))
	}
	return b, nil
}

// LiftBlock ends the block on a customer's target, and every other block
// of theirs on the same business object (one lift frees the object in
// every system that reaches it); ErrNotFound when none is in force.
func (t *Tx) LiftBlock(ctx context.Context, customerRef, system, targetID string, by int64, at time.Time) error {
	tag, err := t.tx.Exec(ctx, `UPDATE target_blocks SET lifted_at = $4, lifted_by = $5
		WHERE customer_ref = $1 AND lifted_at IS NULL AND (system = $2 AND target_id = $3
			OR (business_key_name, business_key_value) IN (SELECT business_key_name, business_key_value FROM target_blocks
				WHERE customer_ref = $1 AND system = $2 AND target_id = $3 AND lifted_at IS NULL))`,
		customerRef, system, targetID, at, by)
	if err != nil {
		return fmt.Errorf("store.LiftBlock: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store.LiftBlock: %w", &NotFoundError{What: "block"})
	}
	return nil
}

// BlocksForCustomer lists the blocks in force on a customer's targets,
// oldest first: every one of their tasks is held by them.
func (s *Store) BlocksForCustomer(ctx context.Context, customerRef string) ([]TargetBlock, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+targetBlockColumns+`
		FROM target_blocks WHERE customer_ref = $1 AND lifted_at IS NULL ORDER BY created_at, system, target_id`, customerRef)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[TargetBlock])
	if err != nil {
		return nil, fmt.Errorf("store.BlocksForCustomer: %w", err)
	}
	return out, nil
}
