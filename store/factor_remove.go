package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// DeleteFactor removes the user's factor factorID of kind ("totp" or
// "passkey") and records e in the same transaction; keepOne refuses
// removing the user's last confirmed factor (ErrConflict). The user's
// factor rows are locked first, so two removals racing cannot leave none.
// Removing the last confirmed factor also forgets the recovery codes,
// which stand in for a factor the person no longer has. ErrNotFound when
// the user has no such factor.
func (s *Store) DeleteFactor(ctx context.Context, userID, factorID int64, kind string, keepOne bool, e Event) error {
	err := s.InTx(ctx, func(tx *Tx) error {
		rows, _ := tx.tx.Query(ctx, `SELECT id FROM staff_factors WHERE user_id = $1 AND confirmed_at IS NOT NULL
			ORDER BY id FOR UPDATE`, userID)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		last := len(ids) == 1 && ids[0] == factorID
		if keepOne && last {
			return ErrConflict
		}
		tag, err := tx.tx.Exec(ctx, `DELETE FROM staff_factors WHERE id = $1 AND user_id = $2 AND kind = $3`, factorID, userID, kind)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		if last {
			if _, err := tx.tx.Exec(ctx, `DELETE FROM factor_recovery_codes WHERE user_id = $1`, userID); err != nil {
				return err
			}
		}
		_, err = tx.InsertEvent(ctx, e)
		return err
	})
	if err != nil {
		return fmt.Errorf("store.DeleteFactor(%d, %d): %w", userID, factorID, err)
	}
	return nil
}

// ResetFactors removes every second factor of the user (apps, passkeys,
// recovery codes, ceremonies under way), ends all the user's sessions and
// records e, in one transaction, for an admin helping a person who lost
// them. It returns how many factors went; ErrNotFound when the user had
// none (nothing is recorded then).
func (s *Store) ResetFactors(ctx context.Context, userID int64, e Event) (int, error) {
	var n int
	err := s.InTx(ctx, func(tx *Tx) error {
		tag, err := tx.tx.Exec(ctx, `DELETE FROM staff_factors WHERE user_id = $1`, userID)
		if err != nil {
			return err
		}
		codes, err := tx.tx.Exec(ctx, `DELETE FROM factor_recovery_codes WHERE user_id = $1`, userID)
		if err != nil {
			return err
		}
		if n = int(tag.RowsAffected()); n == 0 && codes.RowsAffected() == 0 {
			return ErrNotFound
		}
		if _, err := tx.tx.Exec(ctx, `DELETE FROM webauthn_ceremonies WHERE user_id = $1`, userID); err != nil {
			return err
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL`,
			userID, e.At); err != nil {
			return err
		}
		_, err = tx.InsertEvent(ctx, e)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store.ResetFactors(%d): %w", userID, err)
	}
	return n, nil
}

// UsersWithFactors lists the users who have a second factor (confirmed or
// pending) or recovery codes: those an admin can reset.
func (s *Store) UsersWithFactors(ctx context.Context) (map[int64]bool, error) {
	rows, _ := s.pool.Query(ctx, `SELECT user_id FROM staff_factors UNION SELECT user_id FROM factor_recovery_codes`)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("store.UsersWithFactors: %w", err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}
