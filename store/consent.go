package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Consent is a row of customer_consents: what a customer decided on a
// request, how they proved who they are, what they were shown (the
// quote, its version and digest, the hash of the arguments it was made
// from) and, when they used a passkey, its assertion (the Passkey fields,
// all nil otherwise).
type Consent struct {
	InvocationID      string          `db:"invocation_id"`
	CustomerRef       string          `db:"customer_ref"`
	Proof             string          `db:"proof"`
	Decision          string          `db:"decision"`
	QuoteVersion      int32           `db:"quote_version"`
	QuoteDigest       []byte          `db:"quote_digest"`
	Quote             json.RawMessage `db:"quote"`
	ArgsHash          []byte          `db:"args_hash"`
	CredentialID      []byte          `db:"credential_id"`
	PublicKey         []byte          `db:"public_key"`
	RPID              *string         `db:"rp_id"`
	Origin            *string         `db:"origin"`
	AuthenticatorData []byte          `db:"authenticator_data"`
	ClientDataJSON    []byte          `db:"client_data_json"`
	Signature         []byte          `db:"signature"`
	DecidedAt         time.Time       `db:"decided_at"`
}

// InsertConsent records a customer's decision in its transaction. A
// request is decided once: a second consent for it is an error, which
// rolls the second decision back.
func (t *Tx) InsertConsent(ctx context.Context, c Consent) error {
	_, err := t.tx.Exec(ctx, `
		INSERT INTO customer_consents (invocation_id, customer_ref, proof, decision, quote_version, quote_digest, quote, args_hash,
			credential_id, public_key, rp_id, origin, authenticator_data, client_data_json, signature, decided_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		c.InvocationID, c.CustomerRef, c.Proof, c.Decision, c.QuoteVersion, c.QuoteDigest, string(c.Quote), c.ArgsHash,
		c.CredentialID, c.PublicKey, c.RPID, c.Origin, c.AuthenticatorData, c.ClientDataJSON, c.Signature, c.DecidedAt)
	if err != nil {
		return fmt.Errorf("store.InsertConsent(%s): %w", c.InvocationID, err)
	}
	return nil
}

// ConsentOf returns the customer's recorded decision on a request;
// ErrNotFound when no customer decided it.
func (s *Store) ConsentOf(ctx context.Context, invocationID string) (Consent, error) {
	rows, _ := s.pool.Query(ctx, `SELECT invocation_id, customer_ref, proof, decision, quote_version, quote_digest, quote,
		args_hash, credential_id, public_key, rp_id, origin, authenticator_data, client_data_json, signature, decided_at
		FROM customer_consents WHERE invocation_id = $1`, invocationID)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[Consent])
	if errors.Is(err, pgx.ErrNoRows) {
		return Consent{}, fmt.Errorf("store.ConsentOf(%s): %w", invocationID, ErrNotFound)
	}
	if err != nil {
		return Consent{}, fmt.Errorf("store.ConsentOf(%s): %w", invocationID, err)
	}
	return c, nil
}
