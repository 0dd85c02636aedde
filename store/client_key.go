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
	// TookOver is true when the caller holds the key because an earlier
	// claim was left unfinished for too long (its request crashed).
	TookOver bool
	// ClaimedAt identifies the claim the caller holds: binding and
	// releasing touch only that claim, never one that took it over.
	ClaimedAt time.Time
	// SameRequest reports whether an existing claim was made for the same
	// request.
	SameRequest bool
	// InvocationID is the finished request's invocation; empty while the
	// first request is still in progress.
	InvocationID string
}

// ClaimClientKey claims a caller's Idempotency-Key for a request, or
// reports who holds it. A claim still in progress that was made before
// staleBefore is one whose request died (a crash between claim and bind):
// if that request made an invocation the key is bound to it now; if not,
// this caller takes the claim over.
func (s *Store) ClaimClientKey(ctx context.Context, taskID, key string, requestHash []byte, at, staleBefore time.Time) (ClientKeyClaim, error) {
	var c ClientKeyClaim
	err := s.InTx(ctx, func(t *Tx) error {
		tag, err := t.tx.Exec(ctx, `INSERT INTO client_keys (task_id, key, request_hash, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (task_id, key) DO NOTHING`, taskID, key, requestHash, at)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			c = ClientKeyClaim{Claimed: true, ClaimedAt: at}
			return nil
		}
		var hash []byte
		var inv *string
		var claimedAt time.Time
		err = t.tx.QueryRow(ctx, `SELECT request_hash, invocation_id, created_at FROM client_keys
			WHERE task_id = $1 AND key = $2 FOR UPDATE`, taskID, key).Scan(&hash, &inv, &claimedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			// Released between our insert and read: the caller may try again.
			return ErrConflict
		}
		if err != nil {
			return err
		}
		c = ClientKeyClaim{SameRequest: bytes.Equal(hash, requestHash)}
		if inv != nil {
			c.InvocationID = *inv
			return nil
		}
		if !claimedAt.Before(staleBefore) {
			return nil
		}
		// The dead request may have committed its invocation before it
		// died: then that is the key's result, and nothing is proposed twice.
		if made, err := t.invocationByClientKey(ctx, taskID, key); err == nil {
			c.InvocationID = made.ID
			_, err = t.tx.Exec(ctx, `UPDATE client_keys SET invocation_id = $3 WHERE task_id = $1 AND key = $2`, taskID, key, made.ID)
			return err
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if _, err := t.tx.Exec(ctx, `UPDATE client_keys SET request_hash = $3, created_at = $4 WHERE task_id = $1 AND key = $2`,
			taskID, key, requestHash, at); err != nil {
			return err
		}
		c = ClientKeyClaim{Claimed: true, TookOver: true, ClaimedAt: at}
		return nil
	})
	if err != nil {
		return ClientKeyClaim{}, fmt.Errorf("store.ClaimClientKey: %w", err)
	}
	return c, nil
}

// BindClientKey records the invocation a claim produced; a claim taken
// over meanwhile (claimedAt differs) is left alone.
func (s *Store) BindClientKey(ctx context.Context, taskID, key string, claimedAt time.Time, invocationID string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE client_keys SET invocation_id = $3
		WHERE task_id = $1 AND key = $2 AND created_at = $4 AND invocation_id IS NULL`, taskID, key, invocationID, claimedAt); err != nil {
		return fmt.Errorf("store.BindClientKey: %w", err)
	}
	return nil
}

// ReleaseClientKey frees a claimed key whose request failed before making
// an invocation, so the caller may try again with it; a claim taken over
// meanwhile (claimedAt differs) is left alone.
func (s *Store) ReleaseClientKey(ctx context.Context, taskID, key string, claimedAt time.Time) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM client_keys WHERE task_id = $1 AND key = $2 AND invocation_id IS NULL AND created_at = $3`,
		taskID, key, claimedAt); err != nil {
		return fmt.Errorf("store.ReleaseClientKey: %w", err)
	}
	return nil
}
