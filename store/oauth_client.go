package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// OAuthClient is a row of oauth_clients: a program that asks people for
// tokens to the MCP server, registered (RFC 7591) or known by its Client ID
// Metadata Document (Kind "document", ID the document's URL).
type OAuthClient struct {
	ID           string          `db:"id"`
	Kind         string          `db:"kind"`
	Name         string          `db:"name"`
	RedirectURIs []string        `db:"redirect_uris"`
	Document     json.RawMessage `db:"document"`
	CreatedAt    time.Time       `db:"created_at"`
	FetchedAt    *time.Time      `db:"fetched_at"`
	ApprovedAt   *time.Time      `db:"approved_at"`
	ApprovedBy   *int64          `db:"approved_by"`
	RevokedAt    *time.Time      `db:"revoked_at"`
	RevokedBy    *int64          `db:"revoked_by"`
	// Consents counts the consents people gave it (codes issued): none
	// means it is new here.
	Consents int64 `db:"consents"`
}

const oauthClientColumns = `c.id, c.kind, c.name, c.redirect_uris, c.document, c.created_at, c.fetched_at,
	c.approved_at, c.approved_by, c.revoked_at, c.revoked_by,
	(SELECT count(*) FROM oauth_codes k WHERE k.client_id = c.id) AS consents`

// InsertOAuthClient adds a registered client; an id taken is ErrConflict.
func (s *Store) InsertOAuthClient(ctx context.Context, c OAuthClient) (OAuthClient, error) {
	_, err := s.pool.Exec(ctx, `INSERT INTO oauth_clients (id, kind, name, redirect_uris, document, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, c.ID, c.Kind, c.Name, c.RedirectURIs, c.Document, c.CreatedAt)
	if isUniqueViolation(err) {
		return OAuthClient{}, fmt.Errorf("store.InsertOAuthClient(%s): %w", c.ID, ErrConflict)
	}
	if err != nil {
		return OAuthClient{}, fmt.Errorf("store.InsertOAuthClient(%s): %w", c.ID, err)
	}
	return s.OAuthClient(ctx, c.ID)
}

// SaveOAuthClientDocument keeps a client's metadata document as fetched
// at c.FetchedAt: a new client, or the refreshed copy of a known one (its
// approval and revocation stay). A registered client of that id is
// ErrConflict.
func (s *Store) SaveOAuthClientDocument(ctx context.Context, c OAuthClient) (OAuthClient, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO oauth_clients (id, kind, name, redirect_uris, document, created_at, fetched_at)
		VALUES ($1, 'document', $2, $3, $4, $5, $5)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris,
			document = excluded.document, fetched_at = excluded.fetched_at
		WHERE oauth_clients.kind = 'document'`, c.ID, c.Name, c.RedirectURIs, c.Document, c.FetchedAt)
	if err != nil {
		return OAuthClient{}, fmt.Errorf("store.SaveOAuthClientDocument(%s): %w", c.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return OAuthClient{}, fmt.Errorf("store.SaveOAuthClientDocument(%s): %w", c.ID, ErrConflict)
	}
	return s.OAuthClient(ctx, c.ID)
}

// OAuthClient returns one client, or ErrNotFound.
func (s *Store) OAuthClient(ctx context.Context, id string) (OAuthClient, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients c WHERE c.id = $1`, id)
	c, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthClient])
	if err != nil {
		return OAuthClient{}, fmt.Errorf("store.OAuthClient(%s): %w", id, notFound(err, "client"))
	}
	return c, nil
}

// OAuthClients lists every client, newest first.
func (s *Store) OAuthClients(ctx context.Context) ([]OAuthClient, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients c ORDER BY c.created_at DESC, c.id`)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[OAuthClient])
	if err != nil {
		return nil, fmt.Errorf("store.OAuthClients: %w", err)
	}
	return out, nil
}

// ApproveOAuthClient records an admin's approval of a client and its
// event e in one transaction; ErrNotFound when there is no such client,
// ErrConflict when it is approved already or revoked.
func (s *Store) ApproveOAuthClient(ctx context.Context, id string, by int64, at time.Time, e Event) error {
	return s.InTx(ctx, func(tx *Tx) error {
		tag, err := tx.tx.Exec(ctx, `UPDATE oauth_clients SET approved_at = $2, approved_by = $3
			WHERE id = $1 AND approved_at IS NULL AND revoked_at IS NULL`, id, at, by)
		if err != nil {
			return fmt.Errorf("store.ApproveOAuthClient(%s): %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return tx.clientMissingOr(ctx, id, "store.ApproveOAuthClient")
		}
		_, err = tx.InsertEvent(ctx, e)
		return err
	})
}

// RevokeOAuthClient revokes a client and every grant it holds, with its
// event e, in one transaction: its tokens stop at once and it is refused
// from now on. ErrNotFound when there is no such client, ErrConflict when
// it is revoked already.
func (s *Store) RevokeOAuthClient(ctx context.Context, id string, by int64, at time.Time, e Event) error {
	return s.InTx(ctx, func(tx *Tx) error {
		tag, err := tx.tx.Exec(ctx, `UPDATE oauth_clients SET revoked_at = $2, revoked_by = $3
			WHERE id = $1 AND revoked_at IS NULL`, id, at, by)
		if err != nil {
			return fmt.Errorf("store.RevokeOAuthClient(%s): %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return tx.clientMissingOr(ctx, id, "store.RevokeOAuthClient")
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE oauth_grants SET revoked_at = $2, revoked_why = 'client_revoked'
			WHERE client_id = $1 AND revoked_at IS NULL`, id, at); err != nil {
			return fmt.Errorf("store.RevokeOAuthClient(%s): %w", id, err)
		}
		_, err = tx.InsertEvent(ctx, e)
		return err
	})
}

// clientMissingOr is ErrNotFound when there is no client id, else
// ErrConflict (it was in another state).
func (t *Tx) clientMissingOr(ctx context.Context, id, op string) error {
	var one int
	err := t.tx.QueryRow(ctx, `SELECT 1 FROM oauth_clients WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s(%s): %w", op, id, notFound(err, "client"))
	}
	if err != nil {
		return fmt.Errorf("%s(%s): %w", op, id, err)
	}
	return fmt.Errorf("%s(%s): %w", op, id, ErrConflict)
}

// OAuthClientsNeedApproval reports the admin's setting: whether a client
// no admin approved is refused (false when never set).
func (s *Store) OAuthClientsNeedApproval(ctx context.Context) (bool, error) {
	var need bool
	err := s.pool.QueryRow(ctx, `SELECT clients_need_approval FROM oauth_settings`).Scan(&need)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store.OAuthClientsNeedApproval: %w", err)
	}
	return need, nil
}

// SetOAuthClientsNeedApproval changes the setting, with its event e, in
// one transaction.
func (s *Store) SetOAuthClientsNeedApproval(ctx context.Context, need bool, by int64, at time.Time, e Event) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO oauth_settings (id, clients_need_approval, changed_by, changed_at)
			VALUES (true, $1, $2, $3) ON CONFLICT (id) DO UPDATE SET clients_need_approval = excluded.clients_need_approval,
			changed_by = excluded.changed_by, changed_at = excluded.changed_at`, need, by, at); err != nil {
			return fmt.Errorf("store.SetOAuthClientsNeedApproval: %w", err)
		}
		_, err := tx.InsertEvent(ctx, e)
		return err
	})
}
