package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MailLink is a row of confirmation_mail_links: the single-use "Review
// and decide" link mailed to the customer's contact on file, for one
// request (InvocationID) at one version with one quote. Only the token's
// hash is kept.
type MailLink struct {
	TokenHash    []byte     `db:"token_hash"`
	LinkSelector string     `db:"link_selector"`
	InvocationID string     `db:"invocation_id"`
	Version      int32      `db:"version"`
	QuoteDigest  []byte     `db:"quote_digest"`
	CustomerRef  string     `db:"customer_ref"`
	SentTo       string     `db:"sent_to"`
	CreatedAt    time.Time  `db:"created_at"`
	ExpiresAt    time.Time  `db:"expires_at"`
	SpentAt      *time.Time `db:"spent_at"`
	RetiredAt    *time.Time `db:"retired_at"`
	// Unprompted says the console's loop sent it when the request began
	// waiting (customer_mail_outbox records that), not a person's press.
	Unprompted bool `db:"unprompted"`
}

const mailLinkColumns = `token_hash, link_selector, invocation_id, version, quote_digest, customer_ref, sent_to, created_at, expires_at, spent_at, retired_at, unprompted`

// SentMail is the newest mail (a code or a link) sent to one customer.
type SentMail struct {
	SentTo string    `db:"sent_to"`
	At     time.Time `db:"created_at"`
}

// mailsSince counts the code and link mails sent to customerRef since
// since; the caller holds codeLock.
func (t *Tx) mailsSince(ctx context.Context, customerRef string, since time.Time) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM confirmation_codes WHERE customer_ref = $1 AND created_at >= $2)
		+ (SELECT count(*) FROM confirmation_mail_links WHERE customer_ref = $1 AND created_at >= $2)`, customerRef, since).Scan(&n)
	return n, err
}

// newestMail is the newest code or link mail sent to customerRef.
func (t *Tx) newestMail(ctx context.Context, customerRef string) (SentMail, error) {
	rows, _ := t.tx.Query(ctx, `SELECT sent_to, created_at FROM (
		SELECT sent_to, created_at FROM confirmation_codes WHERE customer_ref = $1
		UNION ALL SELECT sent_to, created_at FROM confirmation_mail_links WHERE customer_ref = $1) m
		ORDER BY created_at DESC LIMIT 1`, customerRef)
	return pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[SentMail])
}

// InsertMailLink stores a new mail link unless its customer was already
// sent caps[i].Max mails (codes and links together) since caps[i].Since,
// for any i: then it returns ErrLimit with the newest mail, for the page
// to say when it went. Earlier links stay valid: whoever holds the
// confirmation link can have a mail sent but cannot retire the one the
// customer holds. The count and the insert hold the codes' lock, so
// concurrent requests cannot pass a cap together.
func (s *Store) InsertMailLink(ctx context.Context, l MailLink, caps []CodeCap) (SentMail, error) {
	var newest SentMail
	var limited bool
	err := s.InTx(ctx, func(tx *Tx) error {
		if err := tx.advisoryLock(ctx, codeLock); err != nil {
			return err
		}
		for _, cp := range caps {
			n, err := tx.mailsSince(ctx, l.CustomerRef, cp.Since)
			if err != nil {
				return err
			}
			if n >= cp.Max {
				limited = true
				newest, err = tx.newestMail(ctx, l.CustomerRef)
				return err
			}
		}
		_, err := tx.tx.Exec(ctx, `INSERT INTO confirmation_mail_links (token_hash, link_selector, invocation_id, version,
			quote_digest, customer_ref, sent_to, created_at, expires_at, unprompted) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			l.TokenHash, l.LinkSelector, l.InvocationID, l.Version, l.QuoteDigest, l.CustomerRef, l.SentTo, l.CreatedAt, l.ExpiresAt, l.Unprompted)
		return err
	})
	if err != nil {
		return SentMail{}, fmt.Errorf("store.InsertMailLink: %w", err)
	}
	if limited {
		return newest, fmt.Errorf("store.InsertMailLink: %w", ErrLimit)
	}
	return SentMail{SentTo: l.SentTo, At: l.CreatedAt}, nil
}

// MailLinkByHash loads a mail link by its token's hash, or ErrNotFound.
func (s *Store) MailLinkByHash(ctx context.Context, tokenHash []byte) (MailLink, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+mailLinkColumns+` FROM confirmation_mail_links WHERE token_hash = $1`, tokenHash)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[MailLink])
	if err != nil {
		return MailLink{}, fmt.Errorf("store.MailLinkByHash: %w", notFound(err, "mail link"))
	}
	return out, nil
}

// ErrNotLive says a mail link was spent, retired or expired already.
var ErrNotLive = errors.New("store: mail link not live")

// SpendMailLink marks the mail link spent at `at`, once, while it is live
// (not spent, not retired, not expired): otherwise it returns ErrNotLive
// with the row as it stands, for the page to say which; an unknown link
// is ErrNotFound. The one guarded UPDATE makes two concurrent spends one.
func (s *Store) SpendMailLink(ctx context.Context, tokenHash []byte, at time.Time) (MailLink, error) {
	rows, _ := s.pool.Query(ctx, `UPDATE confirmation_mail_links SET spent_at = $2
		WHERE token_hash = $1 AND spent_at IS NULL AND retired_at IS NULL AND expires_at > $2 RETURNING `+mailLinkColumns, tokenHash, at)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[MailLink])
	if errors.Is(err, pgx.ErrNoRows) {
		row, err := s.MailLinkByHash(ctx, tokenHash)
		if err != nil {
			return MailLink{}, fmt.Errorf("store.SpendMailLink: %w", err)
		}
		return row, fmt.Errorf("store.SpendMailLink: %w", ErrNotLive)
	}
	if err != nil {
		return MailLink{}, fmt.Errorf("store.SpendMailLink: %w", err)
	}
	return out, nil
}

// RetireMailLinks retires the live mail links of invocationID at `at`
// (its quote was replaced): opened later, they explain and prove nothing.
func (s *Store) RetireMailLinks(ctx context.Context, invocationID string, at time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE confirmation_mail_links SET retired_at = $2
		WHERE invocation_id = $1 AND retired_at IS NULL AND spent_at IS NULL`, invocationID, at); err != nil {
		return fmt.Errorf("store.RetireMailLinks: %w", err)
	}
	return nil
}
