package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// HandoffDraftOutcome is what became of a hand-off's draft: Outcome "sent"
// (InvocationID empty while its proposal is being made) or "discarded".
type HandoffDraftOutcome struct {
	Outcome      string
	InvocationID string
}

const handoffDraftOutcome = `SELECT outcome, COALESCE(invocation_id, '') FROM handoff_drafts WHERE conversation_event_id = $1`

// HandoffDraftOutcome says what became of hand-off id's draft; none yet is
// ErrNotFound.
func (s *Store) HandoffDraftOutcome(ctx context.Context, id int64) (HandoffDraftOutcome, error) {
	var o HandoffDraftOutcome
	if err := s.pool.QueryRow(ctx, handoffDraftOutcome, id).Scan(&o.Outcome, &o.InvocationID); err != nil {
		return o, fmt.Errorf("store.HandoffDraftOutcome(%d): %w", id, notFound(err, "draft outcome"))
	}
	return o, nil
}

// HandoffDraftOutcome is Store.HandoffDraftOutcome in the transaction.
func (t *Tx) HandoffDraftOutcome(ctx context.Context, id int64) (HandoffDraftOutcome, error) {
	var o HandoffDraftOutcome
	if err := t.tx.QueryRow(ctx, handoffDraftOutcome, id).Scan(&o.Outcome, &o.InvocationID); err != nil {
		return o, fmt.Errorf("store.HandoffDraftOutcome(%d): %w", id, notFound(err, "draft outcome"))
	}
	return o, nil
}

// DecideHandoffDraft records hand-off id's draft as "sent" or "discarded"
// by userID (call LockHandoffs first). A draft is decided once: one
// already decided is ErrConflict.
func (t *Tx) DecideHandoffDraft(ctx context.Context, id int64, outcome string, userID int64, at time.Time) error {
	var got int64
	err := t.tx.QueryRow(ctx, `INSERT INTO handoff_drafts (conversation_event_id, outcome, user_id, at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (conversation_event_id) DO NOTHING RETURNING conversation_event_id`, id, outcome, userID, at).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("store.DecideHandoffDraft(%d): %w", id, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store.DecideHandoffDraft(%d): %w", id, err)
	}
	return nil
}

// SetHandoffDraftInvocation records the invocation a sent draft became.
func (t *Tx) SetHandoffDraftInvocation(ctx context.Context, id int64, invocationID string) error {
	if _, err := t.tx.Exec(ctx, `UPDATE handoff_drafts SET invocation_id = $2 WHERE conversation_event_id = $1 AND outcome = 'sent'`,
		id, invocationID); err != nil {
		return fmt.Errorf("store.SetHandoffDraftInvocation(%d): %w", id, err)
	}
	return nil
}

// ReleaseHandoffDraft forgets a send whose proposal was refused before it
// was made (no invocation), so the person may send the draft again.
func (t *Tx) ReleaseHandoffDraft(ctx context.Context, id int64) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM handoff_drafts WHERE conversation_event_id = $1 AND outcome = 'sent' AND invocation_id IS NULL`,
		id); err != nil {
		return fmt.Errorf("store.ReleaseHandoffDraft(%d): %w", id, err)
	}
	return nil
}
