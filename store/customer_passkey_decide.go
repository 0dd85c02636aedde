package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// CustomerPasskeyForDecision locks and returns the passkey whose
// credential id is credentialID when it is the customer of system's, read
// in the transaction that decides with it: a removal waits for the
// decision, or the decision finds it gone. ErrNotFound when the customer
// has no such passkey there (another customer's, another system's, or
// one removed).
func (t *Tx) CustomerPasskeyForDecision(ctx context.Context, system, customerRef string, credentialID []byte) (CustomerPasskey, error) {
	rows, _ := t.tx.Query(ctx, `SELECT `+customerPasskeyColumns+` FROM customer_passkeys
		WHERE system = $1 AND customer_ref = $2 AND credential_id = $3 FOR UPDATE`, system, customerRef, credentialID)
	k, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[CustomerPasskey])
	if errors.Is(err, pgx.ErrNoRows) {
		return k, fmt.Errorf("store.CustomerPasskeyForDecision(%s): %w", system, ErrNotFound)
	}
	if err != nil {
		return k, fmt.Errorf("store.CustomerPasskeyForDecision(%s): %w", system, err)
	}
	return k, nil
}

// UsedCustomerPasskey records, in the decision's transaction, that passkey
// id signed a decision with its authenticator counting signCount at at.
// The count never goes back (the ceremony's UseCustomerPasskey may have
// recorded this one already).
func (t *Tx) UsedCustomerPasskey(ctx context.Context, id, signCount int64, at time.Time) error {
	if _, err := t.tx.Exec(ctx, `UPDATE customer_passkeys SET sign_count = GREATEST(sign_count, $2), last_used_at = $3
		WHERE id = $1`, id, signCount, at); err != nil {
		return fmt.Errorf("store.UsedCustomerPasskey(%d): %w", id, err)
	}
	return nil
}
