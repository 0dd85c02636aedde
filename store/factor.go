package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// TOTPFactor is a person's authenticator app: the factor row and its
// sealed secret (decrypted only by internal/factors).
type TOTPFactor struct {
	ID           int64      `db:"id"`
	UserID       int64      `db:"user_id"`
	CreatedAt    time.Time  `db:"created_at"`
	ConfirmedAt  *time.Time `db:"confirmed_at"`
	LastUsedAt   *time.Time `db:"last_used_at"`
	SecretSealed []byte     `db:"secret_sealed"`
	LastStep     *int64     `db:"last_step"`
}

// TOTPFactorOf returns the user's authenticator app, confirmed or not, or
// ErrNotFound.
func (s *Store) TOTPFactorOf(ctx context.Context, userID int64) (TOTPFactor, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT f.id, f.user_id, f.created_at, f.confirmed_at, f.last_used_at, t.secret_sealed, t.last_step
		FROM staff_factors f JOIN totp_secrets t ON t.factor_id = f.id
		WHERE f.user_id = $1 AND f.kind = 'totp'`, userID)
	f, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[TOTPFactor])
	if err != nil {
		return TOTPFactor{}, fmt.Errorf("store.TOTPFactorOf(%d): %w", userID, notFound(err, "authenticator"))
	}
	return f, nil
}

// StartTOTP keeps a new, unconfirmed authenticator secret for the user,
// replacing an earlier unconfirmed one; ErrConflict when the user has a
// confirmed one (it is never replaced behind the person's back).
func (s *Store) StartTOTP(ctx context.Context, userID int64, sealed []byte, at time.Time) error {
	return s.InTx(ctx, func(tx *Tx) error {
		// The row lock makes two set-ups of one person queue.
		var confirmed bool
		err := tx.tx.QueryRow(ctx, `SELECT confirmed_at IS NOT NULL FROM staff_factors
			WHERE user_id = $1 AND kind = 'totp' FOR UPDATE`, userID).Scan(&confirmed)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("store.StartTOTP(%d): %w", userID, err)
		case confirmed:
			return fmt.Errorf("store.StartTOTP(%d): %w", userID, ErrConflict)
		default:
			if _, err := tx.tx.Exec(ctx, `DELETE FROM staff_factors WHERE user_id = $1 AND kind = 'totp'`, userID); err != nil {
				return fmt.Errorf("store.StartTOTP(%d): %w", userID, err)
			}
		}
		var id int64
		if err := tx.tx.QueryRow(ctx, `INSERT INTO staff_factors (user_id, kind, created_at) VALUES ($1, 'totp', $2)
			RETURNING id`, userID, at).Scan(&id); err != nil {
			return fmt.Errorf("store.StartTOTP(%d): %w", userID, err)
		}
		_, err = tx.tx.Exec(ctx, `INSERT INTO totp_secrets (factor_id, secret_sealed) VALUES ($1, $2)`, id, sealed)
		return err
	})
}

// UseTOTPStep accepts a code of time step step for the user's authenticator
// when no code of this or a later step was accepted before: the check and
// the write are one UPDATE, so of two requests racing with one code
// exactly one is accepted. A non-nil confirmed also confirms a pending
// authenticator (the code that proves it was set up), and records
// *confirmed in the same transaction when it did; otherwise only a
// confirmed one takes codes. It reports whether the code was accepted.
func (s *Store) UseTOTPStep(ctx context.Context, factorID, step int64, confirmed *Event, at time.Time) (bool, error) {
	var ok bool
	err := s.InTx(ctx, func(tx *Tx) error {
		// Every part of one statement sees the rows as they were before
		// it, so before says whether this code is the confirming one.
		var wasPending bool
		err := tx.tx.QueryRow(ctx, `
			WITH before AS (SELECT confirmed_at IS NULL AS pending FROM staff_factors WHERE id = $1),
			used AS (
				UPDATE totp_secrets SET last_step = $2
				WHERE factor_id = $1 AND (last_step IS NULL OR last_step < $2)
				  AND EXISTS (SELECT 1 FROM staff_factors f WHERE f.id = $1 AND ($3 OR f.confirmed_at IS NOT NULL))
				RETURNING factor_id),
			done AS (
				UPDATE staff_factors f SET last_used_at = $4, confirmed_at = coalesce(f.confirmed_at, $4)
				FROM used WHERE f.id = used.factor_id RETURNING f.id)
			SELECT (SELECT pending FROM before) FROM done`, factorID, step, confirmed != nil, at).Scan(&wasPending)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		if wasPending && confirmed != nil {
			_, err = tx.InsertEvent(ctx, *confirmed)
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store.UseTOTPStep(%d): %w", factorID, err)
	}
	return ok, nil
}

// ReplaceRecoveryCodes forgets the user's recovery codes and keeps hashes
// as the new ones, recording e (when not nil) in the same transaction.
func (s *Store) ReplaceRecoveryCodes(ctx context.Context, userID int64, hashes [][]byte, at time.Time, e *Event) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Exec(ctx, `DELETE FROM factor_recovery_codes WHERE user_id = $1`, userID); err != nil {
			return fmt.Errorf("store.ReplaceRecoveryCodes(%d): %w", userID, err)
		}
		if _, err := tx.tx.Exec(ctx, `INSERT INTO factor_recovery_codes (user_id, code_hash, created_at)
			SELECT $1, h, $3 FROM unnest($2::bytea[]) AS h`, userID, hashes, at); err != nil {
			return fmt.Errorf("store.ReplaceRecoveryCodes(%d): %w", userID, err)
		}
		if e != nil {
			if _, err := tx.InsertEvent(ctx, *e); err != nil {
				return fmt.Errorf("store.ReplaceRecoveryCodes(%d): %w", userID, err)
			}
		}
		return nil
	})
}

// SpendRecoveryCode marks the user's unused recovery code with hash used,
// in one UPDATE, and reports whether there was one.
func (s *Store) SpendRecoveryCode(ctx context.Context, userID int64, hash []byte, at time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE factor_recovery_codes SET used_at = $3
		WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL`, userID, hash, at)
	if err != nil {
		return false, fmt.Errorf("store.SpendRecoveryCode(%d): %w", userID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// RecoveryCodesLeft counts the user's unused recovery codes.
func (s *Store) RecoveryCodesLeft(ctx context.Context, userID int64) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM factor_recovery_codes WHERE user_id = $1 AND used_at IS NULL`,
		userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("store.RecoveryCodesLeft(%d): %w", userID, err)
	}
	return n, nil
}

// RolesRequiringFactor lists the roles an admin made require a second
// factor.
func (s *Store) RolesRequiringFactor(ctx context.Context) ([]string, error) {
	rows, _ := s.pool.Query(ctx, `SELECT role FROM role_factor_requirements WHERE required ORDER BY role`)
	roles, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store.RolesRequiringFactor: %w", err)
	}
	return roles, nil
}

// SetRoleFactorRequired records whether role requires a second factor,
// with the audit event e, in one transaction. Requiring one also ends
// every session of the role's people but keep (the admin's own): they
// were opened without asking, and the next sign-in asks.
func (s *Store) SetRoleFactorRequired(ctx context.Context, role string, required bool, by int64, keep []byte, e Event) error {
	err := s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Exec(ctx, `
			INSERT INTO role_factor_requirements (role, required, changed_by, changed_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (role) DO UPDATE SET required = $2, changed_by = $3, changed_at = $4`,
			role, required, by, e.At); err != nil {
			return err
		}
		if required {
			if _, err := tx.tx.Exec(ctx, `
				UPDATE sessions SET revoked_at = $2
				WHERE user_id IN (SELECT id FROM users WHERE role = $1) AND revoked_at IS NULL
				  AND ($3::bytea IS NULL OR id_hash <> $3)`, role, e.At, keep); err != nil {
				return err
			}
		}
		_, err := tx.InsertEvent(ctx, e)
		return err
	})
	if err != nil {
		return fmt.Errorf("store.SetRoleFactorRequired(%q): %w", role, err)
	}
	return nil
}

// FactorsInUse reports whether any person has confirmed a second factor or
// any role requires one: then the console cannot start without its
// factor key.
func (s *Store) FactorsInUse(ctx context.Context) (bool, error) {
	var inUse bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM staff_factors WHERE confirmed_at IS NOT NULL)
		OR EXISTS (SELECT 1 FROM role_factor_requirements WHERE required)`).Scan(&inUse); err != nil {
		return false, fmt.Errorf("store.FactorsInUse: %w", err)
	}
	return inUse, nil
}
