package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Policy is a row of policies.
type Policy struct {
	System                   string        `db:"system"`
	Action                   string        `db:"action"`
	Stage                    int16         `db:"stage"`
	Enabled                  bool          `db:"enabled"`
	AutoMaxCents             *int64        `db:"auto_max_cents"`
	ApprovalAboveCents       *int64        `db:"approval_above_cents"`
	SecondApproverAboveCents *int64        `db:"second_approver_above_cents"`
	ApprovalWindow           time.Duration `db:"approval_window"`
	ConfirmationWindow       time.Duration `db:"confirmation_window"`
	OwnerID                  *int64        `db:"owner_id"`
	ReviewOn                 *time.Time    `db:"review_on"`
	// ApproverRoles are the console roles that may decide the action's
	// cards (CHECK: agent always, manager and admin optionally).
	ApproverRoles []string `db:"approver_roles"`
	// StepUpEvery and StepUpAboveCents say which staff approvals of the
	// action need a passkey assertion made for the decision (every one, or
	// those above the amount); off by default.
	StepUpEvery      bool   `db:"step_up_every"`
	StepUpAboveCents *int64 `db:"step_up_above_cents"`
	// LimitCurrency is the ISO 4217 code (upper case) the amount limits
	// are in; 'USD' for the policies written before it existed.
	LimitCurrency string    `db:"limit_currency"`
	Version       int32     `db:"version"`
	UpdatedAt     time.Time `db:"updated_at"`
}

const policyColumns = `system, action, stage, enabled, auto_max_cents, approval_above_cents, second_approver_above_cents,
	approval_window, confirmation_window, owner_id, review_on, approver_roles, step_up_every, step_up_above_cents, limit_currency, version, updated_at`

// EnsurePolicy inserts p unless the action already has a policy; an
// existing policy is never overwritten by a default.
func (s *Store) EnsurePolicy(ctx context.Context, p Policy) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO policies (system, action, stage, enabled, auto_max_cents, approval_above_cents,
			second_approver_above_cents, approval_window, confirmation_window, owner_id, review_on, updated_at, approver_roles,
			limit_currency)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, coalesce($13, '{agent}'::text[]), coalesce(nullif($14, ''), 'USD'))
		ON CONFLICT (system, action) DO NOTHING`,
		p.System, p.Action, p.Stage, p.Enabled, p.AutoMaxCents, p.ApprovalAboveCents, p.SecondApproverAboveCents,
		p.ApprovalWindow, p.ConfirmationWindow, p.OwnerID, p.ReviewOn, p.UpdatedAt, p.ApproverRoles, p.LimitCurrency)
	if err != nil {
		return fmt.Errorf("store.EnsurePolicy(%s/%s): %w", p.System, p.Action, err)
	}
	return nil
}

// Policy loads one action's policy.
func (s *Store) Policy(ctx context.Context, system, action string) (Policy, error) {
	return policy(ctx, s.pool, system, action, "")
}

// Policies lists every policy.
func (s *Store) Policies(ctx context.Context) ([]Policy, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+policyColumns+` FROM policies ORDER BY system, action`)
	ps, err := pgx.CollectRows(rows, pgx.RowToStructByName[Policy])
	if err != nil {
		return nil, fmt.Errorf("store.Policies: %w", err)
	}
	return ps, nil
}

// PolicyForShare reads a policy inside a transaction, holding a share lock
// so that a policy change waits for the permit that read it.
func (t *Tx) PolicyForShare(ctx context.Context, system, action string) (Policy, error) {
	return policy(ctx, t.tx, system, action, " FOR SHARE")
}

// UpdatePolicy stores p when its version is still expectedVersion,
// bumping the version; ErrConflict when it changed meanwhile.
func (t *Tx) UpdatePolicy(ctx context.Context, p Policy, expectedVersion int32) (Policy, error) {
	rows, _ := t.tx.Query(ctx, `
		UPDATE policies SET stage = $3, enabled = $4, auto_max_cents = $5, approval_above_cents = $6,
			second_approver_above_cents = $7, approval_window = $8, confirmation_window = $9, owner_id = $10,
			review_on = $11, updated_at = $12, approver_roles = $14, step_up_every = $15, step_up_above_cents = $16,
			limit_currency = coalesce(nullif($17, ''), limit_currency), version = version + 1
		WHERE system = $1 AND action = $2 AND version = $13
		RETURNING `+policyColumns,
		p.System, p.Action, p.Stage, p.Enabled, p.AutoMaxCents, p.ApprovalAboveCents, p.SecondApproverAboveCents,
		p.ApprovalWindow, p.ConfirmationWindow, p.OwnerID, p.ReviewOn, p.UpdatedAt, expectedVersion, p.ApproverRoles,
		p.StepUpEvery, p.StepUpAboveCents, p.LimitCurrency)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Policy])
	if errors.Is(err, pgx.ErrNoRows) {
		return Policy{}, fmt.Errorf("store.UpdatePolicy(%s/%s): %w", p.System, p.Action, ErrConflict)
	}
	if err != nil {
		return Policy{}, fmt.Errorf("store.UpdatePolicy(%s/%s): %w", p.System, p.Action, err)
	}
	return out, nil
}

const policySQL = `SELECT ` + policyColumns + ` FROM policies WHERE system = $1 AND action = $2`

func policy(ctx context.Context, db dbtx, system, action, lock string) (Policy, error) {
	rows, _ := db.Query(ctx, policySQL+lock, system, action)
	p, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Policy])
	if err != nil {
		return Policy{}, fmt.Errorf("store: policy %s/%s: %w", system, action, notFound(err, "policy"))
	}
	return p, nil
}

const globalStopSQL = `SELECT stopped FROM controls FOR SHARE`

// SetGlobalStop flips the stop switch; it reports whether it changed.
func (t *Tx) SetGlobalStop(ctx context.Context, stopped bool, at time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE controls SET stopped = $1, changed_at = $2 WHERE stopped <> $1`, stopped, at)
	if err != nil {
		return false, fmt.Errorf("store.SetGlobalStop: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// GlobalStopped reads the stop switch outside a transaction.
func (s *Store) GlobalStopped(ctx context.Context) (bool, error) {
	var stopped bool
	if err := s.pool.QueryRow(ctx, `SELECT stopped FROM controls`).Scan(&stopped); err != nil {
		return false, fmt.Errorf("store.GlobalStopped: %w", err)
	}
	return stopped, nil
}
