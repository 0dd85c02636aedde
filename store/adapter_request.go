package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AdapterRequest is a row of the adapters' request ledger.
type AdapterRequest struct {
	System         string          `db:"system"`
	IdempotencyKey string          `db:"idempotency_key"`
	Action         string          `db:"action"`
	TargetID       string          `db:"target_id"`
	ArgsHash       []byte          `db:"args_hash"`
	State          string          `db:"state"`
	Result         json.RawMessage `db:"result"`
	Error          json.RawMessage `db:"error"`
	CreatedAt      time.Time       `db:"created_at"`
	FinishedAt     *time.Time      `db:"finished_at"`
}

const adapterRequestColumns = `system, idempotency_key, action, target_id, args_hash, state, result, error, created_at, finished_at`

// BeginAdapterRequest records that a call is about to be sent. It returns
// began=true when this caller inserted the row and may send; otherwise it
// returns the existing row and the caller must not send.
func (s *Store) BeginAdapterRequest(ctx context.Context, r AdapterRequest) (existing AdapterRequest, began bool, err error) {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO adapter_requests (system, idempotency_key, action, target_id, args_hash, state, created_at)
		VALUES ($1, $2, $3, $4, $5, 'sending', $6)
		ON CONFLICT (system, idempotency_key) DO NOTHING`,
		r.System, r.IdempotencyKey, r.Action, r.TargetID, r.ArgsHash, r.CreatedAt)
	if err != nil {
		return AdapterRequest{}, false, fmt.Errorf("store.BeginAdapterRequest: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return AdapterRequest{}, true, nil
	}
	existing, err = s.AdapterRequest(ctx, r.System, r.IdempotencyKey)
	return existing, false, err
}

// FinishAdapterRequest records a sent call's outcome. Only a call still
// "sending" or "unknown" can be finished, so a known outcome is never
// overwritten.
func (s *Store) FinishAdapterRequest(ctx context.Context, system, key, state string, result, errJSON json.RawMessage, at time.Time) error {
	_, err := s.pool.Exec(ctx, `
		UPDATE adapter_requests SET state = $3, result = $4, error = $5, finished_at = $6
		WHERE system = $1 AND idempotency_key = $2 AND state IN ('sending', 'unknown')`,
		system, key, state, result, errJSON, at)
	if err != nil {
		return fmt.Errorf("store.FinishAdapterRequest: %w", err)
	}
	return nil
}

// AdapterRequest loads a ledger row.
func (s *Store) AdapterRequest(ctx context.Context, system, key string) (AdapterRequest, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+adapterRequestColumns+` FROM adapter_requests
		WHERE system = $1 AND idempotency_key = $2`, system, key)
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[AdapterRequest])
	if err != nil {
		return AdapterRequest{}, fmt.Errorf("store.AdapterRequest: %w", notFound(err))
	}
	return r, nil
}

// CountAdapterRequests counts calls of an action on a target since a time
// whose effect happened or may have happened (for limits such as one
// cancellation per subscription per day).
func (s *Store) CountAdapterRequests(ctx context.Context, system, action, targetID string, since time.Time) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `
		SELECT count(*) FROM adapter_requests
		WHERE system = $1 AND action = $2 AND target_id = $3 AND created_at >= $4
		  AND state IN ('sending', 'applied', 'unknown')`, system, action, targetID, since).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store.CountAdapterRequests: %w", err)
	}
	return n, nil
}
