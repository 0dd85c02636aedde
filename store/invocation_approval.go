package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// LockInvocation loads a journal row and locks it for the transaction, so
// two approvers deciding the same card at once are serialised.
func (t *Tx) LockInvocation(ctx context.Context, id string) (Invocation, error) {
	return invocation(ctx, t.tx, `id = $1 FOR UPDATE`, id)
}

// RecordApproval records userID's approval of an invocation's arguments
// (by hash) as the first of two. A second click by the same person changes
// nothing.
func (t *Tx) RecordApproval(ctx context.Context, invocationID string, userID int64, argsHash []byte, at time.Time) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO invocation_approvals (invocation_id, user_id, args_hash, at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (invocation_id, user_id) DO NOTHING`, invocationID, userID, argsHash, at)
	if err != nil {
		return fmt.Errorf("store.RecordApproval(%s): %w", invocationID, err)
	}
	return nil
}

// Approval is one recorded approval of an invocation's arguments, with
// the approver's role now (whether it still counts is the policy's
// question).
type Approval struct {
	UserID   int64     `db:"user_id"`
	Role     string    `db:"role"`
	ArgsHash []byte    `db:"args_hash"`
	At       time.Time `db:"at"`
}

// ApprovalsOf lists the recorded first approvals of an invocation.
func (t *Tx) ApprovalsOf(ctx context.Context, invocationID string) ([]Approval, error) {
	rows, _ := t.tx.Query(ctx, `SELECT a.user_id, u.role, a.args_hash, a.at
		FROM invocation_approvals a JOIN users u ON u.id = a.user_id
		WHERE a.invocation_id = $1 ORDER BY a.at`, invocationID)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[Approval])
	if err != nil {
		return nil, fmt.Errorf("store.ApprovalsOf(%s): %w", invocationID, err)
	}
	return out, nil
}

// ProposerUserID returns the console user who proposed an invocation
// (a person sending on an assistant's hand-off draft), or for whom the
// assistant that proposed it acts (an operator's own assistant, whose
// events name them as accountable); empty when an assistant of nobody's
// proposed it. A re-quoted successor was proposed by whoever
// proposed the invocation it supersedes, however many times re-quoted.
func (t *Tx) ProposerUserID(ctx context.Context, invocationID string) (string, error) {
	var id string
	err := t.tx.QueryRow(ctx, `
		WITH RECURSIVE chain (id, supersedes_id) AS (
			SELECT id, supersedes_id FROM invocations WHERE id = $1
			UNION
			SELECT i.id, i.supersedes_id FROM invocations i JOIN chain c ON i.id = c.supersedes_id
		)
		SELECT CASE WHEN e.actor_kind = 'user' THEN e.actor_id ELSE e.data->>'accountable_user_id' END
		FROM events e WHERE e.invocation_id IN (SELECT id FROM chain) AND e.action = 'invocation.proposed'
			AND (e.actor_kind = 'user' OR e.data ? 'accountable_user_id')
		ORDER BY e.id LIMIT 1`, invocationID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store.ProposerUserID(%s): %w", invocationID, err)
	}
	return id, nil
}

// ApproverUserIDs lists the console users whose approval events are on an
// invocation (the final approval and any first approval).
func (t *Tx) ApproverUserIDs(ctx context.Context, invocationID string) ([]string, error) {
	rows, _ := t.tx.Query(ctx, `SELECT DISTINCT actor_id FROM events WHERE invocation_id = $1 AND actor_kind = 'user'
		AND action IN ('invocation.approved', 'invocation.first_approval')`, invocationID)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store.ApproverUserIDs(%s): %w", invocationID, err)
	}
	return out, nil
}
