package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The adapters' request ledger (adapter.Ledger) is keyed by (system,
// idempotency key). Its methods take and return plain values, so that the
// adapter contract can declare them as an interface without importing
// this package.

// BeginAdapterRequest records that a call is about to be sent. It returns
// began=true when this caller inserted the row and may send; otherwise the
// key was used before, nothing is changed, the caller must not send, and
// sameCall says whether that earlier call had the same action and
// arguments hash.
func (s *Store) BeginAdapterRequest(ctx context.Context, system, key, action, targetID string, argsHash []byte, at time.Time) (began, sameCall bool, err error) {
	tag, err := s.pool.Exec(ctx, `
		INSERT INTO adapter_requests (system, idempotency_key, action, target_id, args_hash, state, created_at)
		VALUES ($1, $2, $3, $4, $5, 'sending', $6)
		ON CONFLICT (system, idempotency_key) DO NOTHING`,
		system, key, action, targetID, argsHash, at)
	if err != nil {
		return false, false, fmt.Errorf("store.BeginAdapterRequest: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return true, true, nil
	}
	err = s.pool.QueryRow(ctx, `SELECT action = $3 AND args_hash = $4 FROM adapter_requests
		WHERE system = $1 AND idempotency_key = $2`, system, key, action, argsHash).Scan(&sameCall)
	if err != nil {
		return false, false, fmt.Errorf("store.BeginAdapterRequest: %w", notFound(err, "adapter request"))
	}
	return false, sameCall, nil
}

// CloseAdapterRequest claims key, which no call was begun under, as
// refused with errJSON, so that no call can ever be sent under it:
// reconcile settles an invocation whose call the ledger never had.
// closed is false when the key has a row (a call was begun meanwhile).
func (t *Tx) CloseAdapterRequest(ctx context.Context, system, key, action, targetID string, argsHash []byte, errJSON json.RawMessage, at time.Time) (closed bool, err error) {
	tag, err := t.tx.Exec(ctx, `
		INSERT INTO adapter_requests (system, idempotency_key, action, target_id, args_hash, state, error, created_at, finished_at)
		VALUES ($1, $2, $3, $4, $5, 'refused', $6, $7, $7)
		ON CONFLICT (system, idempotency_key) DO NOTHING`,
		system, key, action, targetID, argsHash, errJSON, at)
	if err != nil {
		return false, fmt.Errorf("store.CloseAdapterRequest: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// FinishAdapterRequest records a sent call's outcome. Only a call still
// "sending" or "unknown" can be finished, so a known outcome is never
// overwritten.
func (s *Store) FinishAdapterRequest(ctx context.Context, system, key, state string, result, errJSON json.RawMessage, at time.Time) error {
	return finishAdapterRequest(ctx, s.pool, system, key, state, result, errJSON, at)
}

// FinishAdapterRequest is Store.FinishAdapterRequest in a transaction: the
// dispatcher records the ledger's outcome of a call together with the
// invocation's (adapter.LedgerOutcomes).
func (t *Tx) FinishAdapterRequest(ctx context.Context, system, key, state string, result, errJSON json.RawMessage, at time.Time) error {
	return finishAdapterRequest(ctx, t.tx, system, key, state, result, errJSON, at)
}

func finishAdapterRequest(ctx context.Context, db dbtx, system, key, state string, result, errJSON json.RawMessage, at time.Time) error {
	_, err := db.Exec(ctx, `
		UPDATE adapter_requests SET state = $3, result = $4, error = $5, finished_at = $6
		WHERE system = $1 AND idempotency_key = $2 AND state IN ('sending', 'unknown')`,
		system, key, state, result, errJSON, at)
	if err != nil {
		return fmt.Errorf("store.FinishAdapterRequest: %w", err)
	}
	return nil
}

// AdapterRequest returns what the ledger holds of a call: its state
// ("sending", "applied", "refused", "unknown"), its result or error as the
// adapter wrote them, and when it was begun. found is false when the key
// has no row.
func (s *Store) AdapterRequest(ctx context.Context, system, key string) (state string, result, errJSON json.RawMessage, createdAt time.Time, found bool, err error) {
	err = s.pool.QueryRow(ctx, `SELECT state, result, error, created_at FROM adapter_requests
		WHERE system = $1 AND idempotency_key = $2`, system, key).Scan(&state, &result, &errJSON, &createdAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, nil, time.Time{}, false, nil
	}
	if err != nil {
		return "", nil, nil, time.Time{}, false, fmt.Errorf("store.AdapterRequest: %w", err)
	}
	return state, result, errJSON, createdAt, true, nil
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
