package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ConfirmationLink is a row of confirmation_links: a customer's
// single-purpose link to one invocation. Only the verifier's hash is kept.
type ConfirmationLink struct {
	Selector     string     `db:"selector"`
	VerifierHash []byte     `db:"verifier_hash"`
	InvocationID string     `db:"invocation_id"`
	CustomerRef  string     `db:"customer_ref"`
	ExpiresAt    time.Time  `db:"expires_at"`
	CreatedAt    time.Time  `db:"created_at"`
	UsedAt       *time.Time `db:"used_at"`
}

const confirmationLinkColumns = `selector, verifier_hash, invocation_id, customer_ref, expires_at, created_at, used_at`

// InsertConfirmationLink stores a new link; a selector already taken is
// ErrConflict.
func (s *Store) InsertConfirmationLink(ctx context.Context, l ConfirmationLink) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO confirmation_links (selector, verifier_hash, invocation_id, customer_ref, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		l.Selector, l.VerifierHash, l.InvocationID, l.CustomerRef, l.ExpiresAt, l.CreatedAt)
	if isUniqueViolation(err) {
		return fmt.Errorf("store.InsertConfirmationLink: %w", ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store.InsertConfirmationLink: %w", err)
	}
	return nil
}

// ConfirmationLink loads a link by its selector, or ErrNotFound.
func (s *Store) ConfirmationLink(ctx context.Context, selector string) (ConfirmationLink, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+confirmationLinkColumns+` FROM confirmation_links WHERE selector = $1`, selector)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ConfirmationLink])
	if err != nil {
		return ConfirmationLink{}, fmt.Errorf("store.ConfirmationLink: %w", notFound(err))
	}
	return out, nil
}

// UseConfirmationLink marks an unused link used at `at` and returns it; a
// link used already (by a concurrent request too) is ErrConflict.
func (s *Store) UseConfirmationLink(ctx context.Context, selector string, at time.Time) (ConfirmationLink, error) {
	rows, _ := s.pool.Query(ctx, `
		UPDATE confirmation_links SET used_at = $2 WHERE selector = $1 AND used_at IS NULL
		RETURNING `+confirmationLinkColumns, selector, at)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ConfirmationLink])
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return ConfirmationLink{}, fmt.Errorf("store.UseConfirmationLink: %w", ErrConflict)
		}
		return ConfirmationLink{}, fmt.Errorf("store.UseConfirmationLink: %w", err)
	}
	return out, nil
}
