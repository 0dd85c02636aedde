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

// MailCaps bound the mails people ask for (codes and links together;
// the console's own mail of a request version counts in neither): per
// customer, across all their requests, and per request, so that one
// request's link — which its assistant holds — cannot use up what the
// customer's other requests may ask for.
type MailCaps struct {
	Customer []CodeCap
	Request  []CodeCap
}

// ErrRequestLimit is ErrLimit reached by a request's own mails.
var ErrRequestLimit = fmt.Errorf("%w for the request", ErrLimit)

// askedMails is the code and link mails people asked for: each with the
// customer it went to, the request (invocation) it was for, and when.
const askedMails = `(SELECT c.customer_ref, l.invocation_id, c.sent_to, c.created_at
		FROM confirmation_codes c JOIN confirmation_links l ON l.selector = c.link_selector
	UNION ALL SELECT customer_ref, invocation_id, sent_to, created_at FROM confirmation_mail_links WHERE NOT unprompted) m`

// The counts and the newest of askedMails, per customer ($1) and per
// request ($1, an invocation id), since $2.
const (
	askedOfCustomer       = `SELECT count(*) FROM ` + askedMails + ` WHERE m.customer_ref = $1 AND m.created_at >= $2`
	askedOfRequest        = `SELECT count(*) FROM ` + askedMails + ` WHERE m.invocation_id = $1 AND m.created_at >= $2`
	newestAskedOfCustomer = `SELECT m.sent_to, m.created_at FROM ` + askedMails + ` WHERE m.customer_ref = $1 ORDER BY m.created_at DESC LIMIT 1`
	newestAskedOfRequest  = `SELECT m.sent_to, m.created_at FROM ` + askedMails + ` WHERE m.invocation_id = $1 ORDER BY m.created_at DESC LIMIT 1`
)

// capMails checks caps for a mail to customerRef about invocationID: it
// returns ErrLimit (ErrRequestLimit for the request's own) with the
// newest mail the reached cap counted, or nil when none is reached. The
// caller holds codeLock.
func (t *Tx) capMails(ctx context.Context, customerRef, invocationID string, caps MailCaps) (SentMail, error) {
	for _, c := range []struct {
		caps          []CodeCap
		count, newest string
		arg           string
		err           error
	}{
		{caps.Customer, askedOfCustomer, newestAskedOfCustomer, customerRef, ErrLimit},
		{caps.Request, askedOfRequest, newestAskedOfRequest, invocationID, ErrRequestLimit},
	} {
		for _, cp := range c.caps {
			var n int
			if err := t.tx.QueryRow(ctx, c.count, c.arg, cp.Since).Scan(&n); err != nil {
				return SentMail{}, err
			}
			if n < cp.Max {
				continue
			}
			rows, _ := t.tx.Query(ctx, c.newest, c.arg)
			newest, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[SentMail])
			if err != nil {
				return SentMail{}, err
			}
			return newest, c.err
		}
	}
	return SentMail{}, nil
}

// InsertMailLink stores a new mail link unless caps are reached (for a
// link someone asked for; the console's own, l.Unprompted, passes none):
// then it returns ErrLimit, or ErrRequestLimit for the request's own
// cap, with the newest mail counted, for the page to say when it went.
// Earlier links stay valid: whoever holds the confirmation link can have
// a mail sent but cannot retire the one the customer holds. The count and
// the insert hold the codes' lock, so concurrent requests cannot pass a
// cap together.
func (s *Store) InsertMailLink(ctx context.Context, l MailLink, caps MailCaps) (SentMail, error) {
	var newest SentMail
	var limit error
	err := s.InTx(ctx, func(tx *Tx) error {
		if err := tx.advisoryLock(ctx, codeLock); err != nil {
			return err
		}
		var err error
		newest, err = tx.capMails(ctx, l.CustomerRef, l.InvocationID, caps)
		if errors.Is(err, ErrLimit) {
			limit = err
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.tx.Exec(ctx, `INSERT INTO confirmation_mail_links (token_hash, link_selector, invocation_id, version,
			quote_digest, customer_ref, sent_to, created_at, expires_at, unprompted) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			l.TokenHash, l.LinkSelector, l.InvocationID, l.Version, l.QuoteDigest, l.CustomerRef, l.SentTo, l.CreatedAt, l.ExpiresAt, l.Unprompted)
		return err
	})
	if err != nil {
		return SentMail{}, fmt.Errorf("store.InsertMailLink: %w", err)
	}
	if limit != nil {
		return newest, fmt.Errorf("store.InsertMailLink: %w", limit)
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
