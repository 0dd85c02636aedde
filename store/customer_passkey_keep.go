package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// customerPasskeyColumns are the columns CustomerPasskey reads.
const customerPasskeyColumns = `id, system, customer_ref, credential_id, public_key, sign_count, transports, aaguid, flags,
	attestation_format, proof, name, created_at, last_used_at`

// DeleteCustomerPasskey removes passkey id of the customer of system with
// e, the audit event of its removal, in one transaction, and returns what
// was removed. Another customer's passkey, or one already removed, is
// ErrNotFound (and nothing is recorded).
func (s *Store) DeleteCustomerPasskey(ctx context.Context, system, customerRef string, id int64, e Event) (CustomerPasskey, error) {
	var removed CustomerPasskey
	err := s.InTx(ctx, func(tx *Tx) error {
		rows, _ := tx.tx.Query(ctx, `DELETE FROM customer_passkeys WHERE id = $1 AND system = $2 AND customer_ref = $3
			RETURNING `+customerPasskeyColumns, id, system, customerRef)
		var err error
		if removed, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[CustomerPasskey]); err != nil {
			return err
		}
		_, err = tx.InsertEvent(ctx, e)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return removed, fmt.Errorf("store.DeleteCustomerPasskey(%s, %d): %w", system, id, ErrNotFound)
	}
	if err != nil {
		return removed, fmt.Errorf("store.DeleteCustomerPasskey(%s, %d): %w", system, id, err)
	}
	return removed, nil
}

// DeleteExpiredCustomerCeremonies drops the customer ceremonies expired
// at now (the console's sweep); it returns how many.
func (s *Store) DeleteExpiredCustomerCeremonies(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM customer_webauthn_ceremonies WHERE expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("store.DeleteExpiredCustomerCeremonies: %w", err)
	}
	return tag.RowsAffected(), nil
}
