package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// StepUp is a row of step_up_assertions: the passkey assertion a person
// made for their approval of one version of a request with the arguments
// hashing to ArgsHash (internal/stepup checks it).
type StepUp struct {
	InvocationID      string    `db:"invocation_id"`
	UserID            int64     `db:"user_id"`
	Version           int32     `db:"version"`
	ArgsHash          []byte    `db:"args_hash"`
	CredentialID      []byte    `db:"credential_id"`
	PublicKey         []byte    `db:"public_key"`
	RPID              string    `db:"rp_id"`
	Origin            string    `db:"origin"`
	AuthenticatorData []byte    `db:"authenticator_data"`
	ClientDataJSON    []byte    `db:"client_data_json"`
	Signature         []byte    `db:"signature"`
	CreatedAt         time.Time `db:"created_at"`
}

// InsertStepUp keeps a step-up assertion with the approval it was made
// for, in that approval's transaction. A person approving the same
// request again (a first approval of arguments edited since) replaces
// their earlier assertion: the one kept is the one of their latest
// approval.
func (t *Tx) InsertStepUp(ctx context.Context, s StepUp) error {
	_, err := t.tx.Exec(ctx, `
		INSERT INTO step_up_assertions (invocation_id, user_id, version, args_hash, credential_id, public_key, rp_id, origin,
			authenticator_data, client_data_json, signature, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (invocation_id, user_id) DO UPDATE SET version = excluded.version, args_hash = excluded.args_hash,
			credential_id = excluded.credential_id, public_key = excluded.public_key, rp_id = excluded.rp_id,
			origin = excluded.origin, authenticator_data = excluded.authenticator_data,
			client_data_json = excluded.client_data_json, signature = excluded.signature, created_at = excluded.created_at`,
		s.InvocationID, s.UserID, s.Version, s.ArgsHash, s.CredentialID, s.PublicKey, s.RPID, s.Origin,
		s.AuthenticatorData, s.ClientDataJSON, s.Signature, s.CreatedAt)
	if err != nil {
		return fmt.Errorf("store.InsertStepUp(%s, %d): %w", s.InvocationID, s.UserID, err)
	}
	return nil
}

// StepUpsOf lists the step-up assertions kept with a request's approvals,
// oldest first.
func (s *Store) StepUpsOf(ctx context.Context, invocationID string) ([]StepUp, error) {
	rows, _ := s.pool.Query(ctx, `SELECT invocation_id, user_id, version, args_hash, credential_id, public_key, rp_id, origin,
		authenticator_data, client_data_json, signature, created_at
		FROM step_up_assertions WHERE invocation_id = $1 ORDER BY created_at, user_id`, invocationID)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[StepUp])
	if err != nil {
		return nil, fmt.Errorf("store.StepUpsOf(%s): %w", invocationID, err)
	}
	return out, nil
}

// PasskeyPublicKey returns the COSE public key of userID's passkey whose
// credential id is credentialID, read in the transaction that decides
// with it; ErrNotFound when the user has no such passkey (another
// person's, or one removed).
func (t *Tx) PasskeyPublicKey(ctx context.Context, userID int64, credentialID []byte) ([]byte, error) {
	var key []byte
	err := t.tx.QueryRow(ctx, `SELECT p.public_key FROM passkeys p JOIN staff_factors f ON f.id = p.factor_id
		WHERE f.user_id = $1 AND f.kind = 'passkey' AND p.credential_id = $2`, userID, credentialID).Scan(&key)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store.PasskeyPublicKey(%d): %w", userID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store.PasskeyPublicKey(%d): %w", userID, err)
	}
	return key, nil
}
