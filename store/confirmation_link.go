package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ConfirmationLink is a row of confirmation_links: the link that shows a
// customer one invocation awaiting their confirmation. Only the
// verifier's hash is kept. At most one link of an invocation is live (not
// revoked).
type ConfirmationLink struct {
	Selector     string     `db:"selector"`
	VerifierHash []byte     `db:"verifier_hash"`
	InvocationID string     `db:"invocation_id"`
	CustomerRef  string     `db:"customer_ref"`
	ExpiresAt    time.Time  `db:"expires_at"`
	CreatedAt    time.Time  `db:"created_at"`
	RevokedAt    *time.Time `db:"revoked_at"`
}

const confirmationLinkColumns = `selector, verifier_hash, invocation_id, customer_ref, expires_at, created_at, revoked_at`

// InsertConfirmationLink stores a new live link. A selector already taken,
// or another live link of the same invocation (a concurrent first read),
// is ErrConflict.
func (s *Store) InsertConfirmationLink(ctx context.Context, l ConfirmationLink) error {
	return insertConfirmationLink(ctx, s.pool, l)
}

// InsertConfirmationLink stores a new live link inside a transaction: the
// one that routes its invocation to the customer.
func (t *Tx) InsertConfirmationLink(ctx context.Context, l ConfirmationLink) error {
	return insertConfirmationLink(ctx, t.tx, l)
}

func insertConfirmationLink(ctx context.Context, db dbtx, l ConfirmationLink) error {
	_, err := db.Exec(ctx, `
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
		return ConfirmationLink{}, fmt.Errorf("store.ConfirmationLink: %w", notFound(err, "confirmation link"))
	}
	return out, nil
}

// LiveConfirmationLink loads the invocation's live link, or ErrNotFound.
func (s *Store) LiveConfirmationLink(ctx context.Context, invocationID string) (ConfirmationLink, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+confirmationLinkColumns+` FROM confirmation_links
		WHERE invocation_id = $1 AND revoked_at IS NULL`, invocationID)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ConfirmationLink])
	if err != nil {
		return ConfirmationLink{}, fmt.Errorf("store.LiveConfirmationLink: %w", notFound(err, "confirmation link"))
	}
	return out, nil
}

// ReplaceConfirmationLink revokes the invocation's live link, if any, and
// stores next as the live one, in one transaction.
func (s *Store) ReplaceConfirmationLink(ctx context.Context, next ConfirmationLink) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Exec(ctx, `UPDATE confirmation_links SET revoked_at = $2
			WHERE invocation_id = $1 AND revoked_at IS NULL`, next.InvocationID, next.CreatedAt); err != nil {
			return fmt.Errorf("store.ReplaceConfirmationLink: %w", err)
		}
		return insertConfirmationLink(ctx, tx.tx, next)
	})
}

// DeleteDeadConfirmationLinks deletes links that expired or were revoked
// before `before`, with their codes, and wrong codes counted before it
// (the guess limits' windows are shorter); it returns how many links went. The
// audit trail keeps what the customer decided: a link is only a key.
func (s *Store) DeleteDeadConfirmationLinks(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM confirmation_links WHERE expires_at < $1 OR revoked_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("store.DeleteDeadConfirmationLinks: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM customer_assertions WHERE expires_at < $1`, before); err != nil {
		return 0, fmt.Errorf("store.DeleteDeadConfirmationLinks: assertions: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM confirmation_code_misses WHERE at < $1`, before); err != nil {
		return 0, fmt.Errorf("store.DeleteDeadConfirmationLinks: misses: %w", err)
	}
	return tag.RowsAffected(), nil
}

// UseCustomerAssertion records an assertion's nonce as spent; a nonce
// spent already is ErrConflict.
func (s *Store) UseCustomerAssertion(ctx context.Context, system, nonce, customerRef string, expiresAt, at time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO customer_assertions (system, nonce, customer_ref, expires_at, used_at)
		VALUES ($1, $2, $3, $4, $5)`, system, nonce, customerRef, expiresAt, at)
	if isUniqueViolation(err) {
		return fmt.Errorf("store.UseCustomerAssertion: %w", ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store.UseCustomerAssertion: %w", err)
	}
	return nil
}

// LinkDue is an invocation awaiting its customer's confirmation, with its
// task's customer and its live link's selector and verifier hash (nil
// when it has none).
type LinkDue struct {
	InvocationID string    `db:"invocation_id"`
	DeadlineAt   time.Time `db:"deadline_at"`
	CustomerRef  string    `db:"customer_ref"`
	Selector     *string   `db:"selector"`
	VerifierHash []byte    `db:"verifier_hash"`
}

// LinksDue lists, at most limit, the invocations awaiting their
// customer's confirmation whose deadline is after now, with their live
// links: the sweeper makes a link for one that has none, or one the
// console can no longer show.
func (s *Store) LinksDue(ctx context.Context, now time.Time, limit int) ([]LinkDue, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT i.id AS invocation_id, i.deadline_at, t.customer_ref, l.selector, l.verifier_hash
		FROM invocations i
		JOIN tasks t ON t.id = i.task_id
		LEFT JOIN confirmation_links l ON l.invocation_id = i.id AND l.revoked_at IS NULL
		WHERE i.state = 'awaiting_confirmation' AND i.deadline_at > $1
		ORDER BY i.deadline_at
		LIMIT $2`, now, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[LinkDue])
	if err != nil {
		return nil, fmt.Errorf("store.LinksDue: %w", err)
	}
	return out, nil
}
