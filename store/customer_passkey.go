package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// CustomerPasskey is a customer's WebAuthn credential for one system
// (verified only by internal/custkeys).
type CustomerPasskey struct {
	ID                int64    `db:"id"`
	System            string   `db:"system"`
	CustomerRef       string   `db:"customer_ref"`
	CredentialID      []byte   `db:"credential_id"`
	PublicKey         []byte   `db:"public_key"`
	SignCount         int64    `db:"sign_count"`
	Transports        []string `db:"transports"`
	AAGUID            []byte   `db:"aaguid"`
	Flags             int16    `db:"flags"`
	AttestationFormat string   `db:"attestation_format"`
	Proof             string   `db:"proof"`
	// Name is what the customer's list calls it (migration 00044).
	Name       string     `db:"name"`
	CreatedAt  time.Time  `db:"created_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
}

// CustomerWebAuthnHandle returns the WebAuthn user handle of the customer
// of system, keeping fresh as it when they have none yet; two first
// registrations racing get the same handle.
func (s *Store) CustomerWebAuthnHandle(ctx context.Context, system, customerRef string, fresh []byte) ([]byte, error) {
	var handle []byte
	err := s.pool.QueryRow(ctx, `
		WITH ins AS (
			INSERT INTO customer_webauthn_handles (system, customer_ref, handle) VALUES ($1, $2, $3)
			ON CONFLICT (system, customer_ref) DO NOTHING RETURNING handle)
		SELECT handle FROM ins
		UNION ALL SELECT handle FROM customer_webauthn_handles WHERE system = $1 AND customer_ref = $2
		LIMIT 1`, system, customerRef, fresh).Scan(&handle)
	if err != nil {
		return nil, fmt.Errorf("store.CustomerWebAuthnHandle(%s): %w", system, err)
	}
	return handle, nil
}

// CustomerPasskeysOf lists the passkeys of the customer of system, oldest
// first.
func (s *Store) CustomerPasskeysOf(ctx context.Context, system, customerRef string) ([]CustomerPasskey, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+customerPasskeyColumns+`
		FROM customer_passkeys WHERE system = $1 AND customer_ref = $2 ORDER BY id`, system, customerRef)
	keys, err := pgx.CollectRows(rows, pgx.RowToStructByName[CustomerPasskey])
	if err != nil {
		return nil, fmt.Errorf("store.CustomerPasskeysOf(%s): %w", system, err)
	}
	return keys, nil
}

// InsertCustomerPasskey keeps a customer's newly registered passkey (their
// handle must exist: CustomerWebAuthnHandle) with e, the audit event of
// its adding, in one transaction. The customer's handle row is locked
// while their passkeys are counted, so two registrations racing cannot
// both pass max: a customer who has max already is ErrLimit. A
// credential id registered before (by anyone) is ErrConflict. An empty
// name is "Passkey".
func (s *Store) InsertCustomerPasskey(ctx context.Context, p CustomerPasskey, limit int, e Event) error {
	err := s.InTx(ctx, func(tx *Tx) error {
		var n int
		if err := tx.tx.QueryRow(ctx, `SELECT 1 FROM customer_webauthn_handles WHERE system = $1 AND customer_ref = $2
			FOR UPDATE`, p.System, p.CustomerRef).Scan(&n); err != nil {
			return err
		}
		if err := tx.tx.QueryRow(ctx, `SELECT count(*) FROM customer_passkeys WHERE system = $1 AND customer_ref = $2`,
			p.System, p.CustomerRef).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return ErrLimit
		}
		if _, err := tx.tx.Exec(ctx, `INSERT INTO customer_passkeys (system, customer_ref, credential_id, public_key,
			sign_count, transports, aaguid, flags, attestation_format, proof, created_at, name)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, COALESCE(NULLIF($12, ''), 'Passkey'))`,
			p.System, p.CustomerRef, p.CredentialID, p.PublicKey, p.SignCount, p.Transports, p.AAGUID, p.Flags,
			p.AttestationFormat, p.Proof, p.CreatedAt, p.Name); err != nil {
			return err
		}
		_, err := tx.InsertEvent(ctx, e)
		return err
	})
	switch {
	case isUniqueViolation(err):
		return fmt.Errorf("store.InsertCustomerPasskey(%s): %w", p.System, ErrConflict)
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("store.InsertCustomerPasskey(%s): no handle: %w", p.System, ErrNotFound)
	case err != nil:
		return fmt.Errorf("store.InsertCustomerPasskey(%s): %w", p.System, err)
	}
	return nil
}

// UseCustomerPasskey records a use of the customer's passkey id whose
// authenticator now counts signCount: only when the count grew (or the
// authenticator keeps none: both zero), checked and written by one
// UPDATE, so an older count and two requests racing with one count are
// refused. It reports whether the use was recorded.
func (s *Store) UseCustomerPasskey(ctx context.Context, id, signCount int64, at time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `
		UPDATE customer_passkeys SET sign_count = $2, last_used_at = $3
		WHERE id = $1 AND (sign_count < $2 OR (sign_count = 0 AND $2 = 0))`, id, signCount, at)
	if err != nil {
		return false, fmt.Errorf("store.UseCustomerPasskey(%d): %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Customer ceremony purposes.
const (
	// CustomerCeremonyRegister adds a passkey for the customer of a system.
	CustomerCeremonyRegister = "register"
	// CustomerCeremonyDecide is an assertion made for one decision on one
	// request (internal/consent): its challenge is the decision's.
	CustomerCeremonyDecide = "decide"
)

// CustomerCeremony names whose ceremony it is: the customer of a system,
// on one request, for one purpose.
type CustomerCeremony struct {
	System, CustomerRef, InvocationID, Purpose string
}

// StartCustomerCeremony keeps a customer's WebAuthn ceremony's session
// data under idHash until expires, and drops every customer ceremony
// already expired at now.
func (s *Store) StartCustomerCeremony(ctx context.Context, idHash []byte, who CustomerCeremony, session []byte, now, expires time.Time) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Exec(ctx, `DELETE FROM customer_webauthn_ceremonies WHERE expires_at <= $1`, now); err != nil {
			return fmt.Errorf("store.StartCustomerCeremony: %w", err)
		}
		if _, err := tx.tx.Exec(ctx, `INSERT INTO customer_webauthn_ceremonies
			(id_hash, system, customer_ref, invocation_id, purpose, session, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			idHash, who.System, who.CustomerRef, who.InvocationID, who.Purpose, session, expires); err != nil {
			return fmt.Errorf("store.StartCustomerCeremony(%s): %w", who.InvocationID, err)
		}
		return nil
	})
}

// TakeCustomerCeremony deletes and returns the session data of who's
// ceremony under idHash, if it has not expired at now: a ceremony is taken
// once. ErrNotFound when there is none (never begun, taken already,
// expired, or another customer's, request's or purpose's).
func (s *Store) TakeCustomerCeremony(ctx context.Context, idHash []byte, who CustomerCeremony, now time.Time) ([]byte, error) {
	var session []byte
	var expires time.Time
	err := s.pool.QueryRow(ctx, `DELETE FROM customer_webauthn_ceremonies
		WHERE id_hash = $1 AND system = $2 AND customer_ref = $3 AND invocation_id = $4 AND purpose = $5
		RETURNING session, expires_at`, idHash, who.System, who.CustomerRef, who.InvocationID, who.Purpose).Scan(&session, &expires)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !now.Before(expires)) {
		return nil, fmt.Errorf("store.TakeCustomerCeremony(%s): %w", who.InvocationID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store.TakeCustomerCeremony(%s): %w", who.InvocationID, err)
	}
	return session, nil
}
