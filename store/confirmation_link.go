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
		return ConfirmationLink{}, fmt.Errorf("store.ConfirmationLink: %w", notFound(err))
	}
	return out, nil
}

// LiveConfirmationLink loads the invocation's live link, or ErrNotFound.
func (s *Store) LiveConfirmationLink(ctx context.Context, invocationID string) (ConfirmationLink, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+confirmationLinkColumns+` FROM confirmation_links
		WHERE invocation_id = $1 AND revoked_at IS NULL`, invocationID)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ConfirmationLink])
	if err != nil {
		return ConfirmationLink{}, fmt.Errorf("store.LiveConfirmationLink: %w", notFound(err))
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
// before `before`, with their codes; it returns how many links went. The
// audit trail keeps what the customer decided: a link is only a key.
func (s *Store) DeleteDeadConfirmationLinks(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM confirmation_links WHERE expires_at < $1 OR revoked_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("store.DeleteDeadConfirmationLinks: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM customer_assertions WHERE expires_at < $1`, before); err != nil {
		return 0, fmt.Errorf("store.DeleteDeadConfirmationLinks: assertions: %w", err)
	}
	return tag.RowsAffected(), nil
}

// ConfirmationCode is a row of confirmation_codes: a one-time code sent to
// the customer's contact on file for one link.
type ConfirmationCode struct {
	ID           int64      `db:"id"`
	LinkSelector string     `db:"link_selector"`
	CustomerRef  string     `db:"customer_ref"`
	SentTo       string     `db:"sent_to"`
	Salt         []byte     `db:"salt"`
	CodeHash     []byte     `db:"code_hash"`
	Attempts     int16      `db:"attempts"`
	CreatedAt    time.Time  `db:"created_at"`
	ExpiresAt    time.Time  `db:"expires_at"`
	UsedAt       *time.Time `db:"used_at"`
}

const confirmationCodeColumns = `id, link_selector, customer_ref, sent_to, salt, code_hash, attempts, created_at, expires_at, used_at`

// InsertConfirmationCode stores a new code for a link, unless maxRecent
// codes were made for that link since `since` (then ErrLimit). The count
// and the insert are serialised per link, so concurrent requests cannot
// pass the limit together.
func (s *Store) InsertConfirmationCode(ctx context.Context, c ConfirmationCode, since time.Time, maxRecent int) (ConfirmationCode, error) {
	var out ConfirmationCode
	err := s.InTx(ctx, func(tx *Tx) error {
		if err := tx.AdvisoryLock(ctx, "confirmation_code:"+c.LinkSelector); err != nil {
			return err
		}
		var n int
		if err := tx.tx.QueryRow(ctx, `SELECT count(*) FROM confirmation_codes WHERE link_selector = $1 AND created_at >= $2`,
			c.LinkSelector, since).Scan(&n); err != nil {
			return err
		}
		if n >= maxRecent {
			return ErrLimit
		}
		// A new code retires the link's earlier ones: only the latest works.
		if _, err := tx.tx.Exec(ctx, `UPDATE confirmation_codes SET expires_at = least(expires_at, $2)
			WHERE link_selector = $1 AND used_at IS NULL`, c.LinkSelector, c.CreatedAt); err != nil {
			return err
		}
		rows, _ := tx.tx.Query(ctx, `
			INSERT INTO confirmation_codes (link_selector, customer_ref, sent_to, salt, code_hash, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+confirmationCodeColumns,
			c.LinkSelector, c.CustomerRef, c.SentTo, c.Salt, c.CodeHash, c.CreatedAt, c.ExpiresAt)
		var err error
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ConfirmationCode])
		return err
	})
	if err != nil {
		return ConfirmationCode{}, fmt.Errorf("store.InsertConfirmationCode: %w", err)
	}
	return out, nil
}

// TryConfirmationCode spends one attempt of the link's latest live code
// (unused, unexpired at `at`, fewer than maxAttempts tries) and returns it
// with the attempt counted, for the caller to compare. ErrNotFound means no
// code can be tried now. Concurrent tries each take their own attempt.
func (s *Store) TryConfirmationCode(ctx context.Context, selector string, at time.Time, maxAttempts int) (ConfirmationCode, error) {
	rows, _ := s.pool.Query(ctx, `
		UPDATE confirmation_codes SET attempts = attempts + 1
		 WHERE id = (SELECT id FROM confirmation_codes
		              WHERE link_selector = $1 AND used_at IS NULL AND expires_at > $2 AND attempts < $3
		              ORDER BY created_at DESC, id DESC LIMIT 1)
		   AND attempts < $3
		RETURNING `+confirmationCodeColumns, selector, at, maxAttempts)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ConfirmationCode])
	if err != nil {
		return ConfirmationCode{}, fmt.Errorf("store.TryConfirmationCode: %w", notFound(err))
	}
	return out, nil
}

// UseConfirmationCode marks a code used; a code used already (by a
// concurrent request) is ErrConflict.
func (s *Store) UseConfirmationCode(ctx context.Context, id int64, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE confirmation_codes SET used_at = $2 WHERE id = $1 AND used_at IS NULL`, id, at)
	if err != nil {
		return fmt.Errorf("store.UseConfirmationCode: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store.UseConfirmationCode: %w", ErrConflict)
	}
	return nil
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
