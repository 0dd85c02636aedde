package store

import (
	"context"
	"fmt"
	"time"
)

// ClaimConversation makes a conversation id the assistant's when nobody
// has used it yet, and returns the id of the assistant it belongs to,
// which is another assistant's when someone used it first.
func (s *Store) ClaimConversation(ctx context.Context, id, assistantID string, at time.Time) (owner string, err error) {
	return claimConversation(ctx, s.pool, id, assistantID, at)
}

// ClaimConversation is Store.ClaimConversation inside a transaction.
func (t *Tx) ClaimConversation(ctx context.Context, id, assistantID string, at time.Time) (owner string, err error) {
	return claimConversation(ctx, t.tx, id, assistantID, at)
}

func claimConversation(ctx context.Context, db dbtx, id, assistantID string, at time.Time) (string, error) {
	if _, err := db.Exec(ctx, `INSERT INTO conversations (id, assistant_id, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO NOTHING`, id, assistantID, at); err != nil {
		return "", fmt.Errorf("store.ClaimConversation(%q): %w", id, err)
	}
	var owner string
	if err := db.QueryRow(ctx, `SELECT assistant_id FROM conversations WHERE id = $1`, id).Scan(&owner); err != nil {
		return "", fmt.Errorf("store.ClaimConversation(%q): %w", id, err)
	}
	return owner, nil
}
