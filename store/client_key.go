package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ClientKeyClaim is what ClaimClientKey found.
type ClientKeyClaim struct {
	// Claimed is true when this caller now holds the key.
	Claimed bool
	// SameRequest reports whether an existing claim was made for the same
	// request.
	SameRequest bool
	// InvocationID is the finished request's invocation; empty while the
	// first request is still in progress.
	InvocationID string
}

// ClaimClientKey claims a caller's Idempotency-Key for a request, or
// reports who holds it.
func (s *Store) ClaimClientKey(ctx context.Context, taskID, key string, requestHash []byte, at time.Time) (ClientKeyClaim, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO client_keys (task_id, key, request_hash, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (task_id, key) DO NOTHING`, taskID, key, requestHash, at)
	if err != nil {
		return ClientKeyClaim{}, fmt.Errorf("store.ClaimClientKey: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return ClientKeyClaim{Claimed: true}, nil
	}
	var hash []byte
	var inv *string
	err = s.pool.QueryRow(ctx, `SELECT request_hash, invocation_id FROM client_keys WHERE task_id = $1 AND key = $2`, taskID, key).Scan(&hash, &inv)
	if errors.Is(err, pgx.ErrNoRows) {
		// Released between our insert and read: the caller may try again.
		return ClientKeyClaim{}, fmt.Errorf("store.ClaimClientKey: %w", ErrConflict)
	}
	if err != nil {
		return ClientKeyClaim{}, fmt.Errorf("store.ClaimClientKey: %w", err)
	}
	c := ClientKeyClaim{SameRequest: bytes.Equal(hash, requestHash)}
	if inv != nil {
		c.InvocationID = *inv
	}
	return c, nil
}

// BindClientKey records the invocation a claimed key produced.
func (s *Store) BindClientKey(ctx context.Context, taskID, key, invocationID string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE client_keys SET invocation_id = $3 WHERE task_id = $1 AND key = $2`, taskID, key, invocationID); err != nil {
		return fmt.Errorf("store.BindClientKey: %w", err)
	}
	return nil
}

// ReleaseClientKey frees a claimed key whose request failed before making
// an invocation, so the caller may try again with it.
func (s *Store) ReleaseClientKey(ctx context.Context, taskID, key string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM client_keys WHERE task_id = $1 AND key = $2 AND invocation_id IS NULL`, taskID, key); err != nil {
		return fmt.Errorf("store.ReleaseClientKey: %w", err)
	}
	return nil
}
