package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Passkey is a person's WebAuthn credential: the factor row and its
// credential record (verified only by internal/factors).
type Passkey struct {
	FactorID          int64      `db:"factor_id"`
	UserID            int64      `db:"user_id"`
	Name              string     `db:"name"`
	CredentialID      []byte     `db:"credential_id"`
	PublicKey         []byte     `db:"public_key"`
	SignCount         int64      `db:"sign_count"`
	Transports        []string   `db:"transports"`
	AAGUID            []byte     `db:"aaguid"`
	Flags             int16      `db:"flags"`
	AttestationFormat string     `db:"attestation_format"`
	CreatedAt         time.Time  `db:"created_at"`
	LastUsedAt        *time.Time `db:"last_used_at"`
}

// WebAuthnHandle returns the user's WebAuthn user handle, keeping fresh
// as it when the user has none yet; two first registrations racing get
// the same handle.
func (s *Store) WebAuthnHandle(ctx context.Context, userID int64, fresh []byte) ([]byte, error) {
	var handle []byte
	err := s.pool.QueryRow(ctx, `
		WITH ins AS (
			INSERT INTO webauthn_user_handles (user_id, handle) VALUES ($1, $2)
			ON CONFLICT (user_id) DO NOTHING RETURNING handle)
		SELECT handle FROM ins UNION ALL SELECT handle FROM webauthn_user_handles WHERE user_id = $1
		LIMIT 1`, userID, fresh).Scan(&handle)
	if err != nil {
		return nil, fmt.Errorf("store.WebAuthnHandle(%d): %w", userID, err)
	}
	return handle, nil
}

// PasskeysOf lists the user's passkeys, oldest first.
func (s *Store) PasskeysOf(ctx context.Context, userID int64) ([]Passkey, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT p.factor_id, f.user_id, p.name, p.credential_id, p.public_key, p.sign_count, p.transports, p.aaguid,
		       p.flags, p.attestation_format, f.created_at, f.last_used_at
		FROM staff_factors f JOIN passkeys p ON p.factor_id = f.id
		WHERE f.user_id = $1 AND f.kind = 'passkey' ORDER BY f.id`, userID)
	keys, err := pgx.CollectRows(rows, pgx.RowToStructByName[Passkey])
	if err != nil {
		return nil, fmt.Errorf("store.PasskeysOf(%d): %w", userID, err)
	}
	return keys, nil
}

// InsertPasskey keeps a newly registered passkey, confirmed at once, and
// records e in the same transaction; a credential id registered before
// (by anyone) is ErrConflict.
func (s *Store) InsertPasskey(ctx context.Context, p Passkey, e Event) error {
	err := s.InTx(ctx, func(tx *Tx) error {
		var id int64
		if err := tx.tx.QueryRow(ctx, `INSERT INTO staff_factors (user_id, kind, created_at, confirmed_at)
			VALUES ($1, 'passkey', $2, $2) RETURNING id`, p.UserID, p.CreatedAt).Scan(&id); err != nil {
			return err
		}
		_, err := tx.tx.Exec(ctx, `INSERT INTO passkeys (factor_id, credential_id, public_key, sign_count, transports,
			aaguid, flags, attestation_format, name) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			id, p.CredentialID, p.PublicKey, p.SignCount, p.Transports, p.AAGUID, p.Flags, p.AttestationFormat, p.Name)
		if err != nil {
			return err
		}
		_, err = tx.InsertEvent(ctx, e)
		return err
	})
	if isUniqueViolation(err) {
		return fmt.Errorf("store.InsertPasskey(%d): %w", p.UserID, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store.InsertPasskey(%d): %w", p.UserID, err)
	}
	return nil
}

// UsePasskey records a sign-in with the passkey whose authenticator now
// counts signCount: only when the count grew (or the authenticator keeps
// none: both zero), checked and written by one UPDATE, so a cloned
// authenticator's older count and two requests racing with one count are
// refused. It reports whether the use was recorded.
func (s *Store) UsePasskey(ctx context.Context, factorID, signCount int64, at time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		WITH used AS (
			UPDATE passkeys SET sign_count = $2
			WHERE factor_id = $1 AND (sign_count < $2 OR (sign_count = 0 AND $2 = 0))
			RETURNING factor_id)
		UPDATE staff_factors f SET last_used_at = $3 FROM used WHERE f.id = used.factor_id`, factorID, signCount, at)
	if err != nil {
		return false, fmt.Errorf("store.UsePasskey(%d): %w", factorID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Ceremony purposes.
const (
	CeremonyRegister = "register"
	CeremonySignIn   = "sign_in"
	// CeremonyStepUp is a passkey assertion made for one decision
	// (internal/stepup): its challenge is the decision's, not random.
	CeremonyStepUp = "step_up"
)

// StartCeremony keeps a WebAuthn ceremony's session data under idHash
// until expires, and drops every ceremony already expired at now.
func (s *Store) StartCeremony(ctx context.Context, idHash []byte, userID int64, purpose string, session []byte, now, expires time.Time) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Exec(ctx, `DELETE FROM webauthn_ceremonies WHERE expires_at <= $1`, now); err != nil {
			return fmt.Errorf("store.StartCeremony: %w", err)
		}
		if _, err := tx.tx.Exec(ctx, `INSERT INTO webauthn_ceremonies (id_hash, user_id, purpose, session, expires_at)
			VALUES ($1, $2, $3, $4, $5)`, idHash, userID, purpose, session, expires); err != nil {
			return fmt.Errorf("store.StartCeremony(%d): %w", userID, err)
		}
		return nil
	})
}

// TakeCeremony deletes and returns the session data of the user's
// ceremony for purpose under idHash, if it has not expired at now: a
// ceremony is taken once. ErrNotFound when there is none (never begun,
// taken already, expired, or another person's or purpose's).
func (s *Store) TakeCeremony(ctx context.Context, idHash []byte, userID int64, purpose string, now time.Time) ([]byte, error) {
	var session []byte
	var expires time.Time
	err := s.pool.QueryRow(ctx, `DELETE FROM webauthn_ceremonies WHERE id_hash = $1 AND user_id = $2 AND purpose = $3
		RETURNING session, expires_at`, idHash, userID, purpose).Scan(&session, &expires)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !now.Before(expires)) {
		return nil, fmt.Errorf("store.TakeCeremony(%d): %w", userID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store.TakeCeremony(%d): %w", userID, err)
	}
	return session, nil
}
