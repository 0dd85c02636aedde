package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MailDue is a request awaiting its customer whose current version has
// had no mail yet: neither one a person asked for ("E-mail me a link to
// decide") nor the console's own (customer_mail_outbox).
type MailDue struct {
	InvocationID  string    `db:"invocation_id"`
	Version       int32     `db:"version"`
	System        string    `db:"system"`
	TaskID        string    `db:"task_id"`
	CustomerRef   string    `db:"customer_ref"`
	LinkSelector  string    `db:"link_selector"`
	LinkExpiresAt time.Time `db:"link_expires_at"`
}

// MailSystems says whose requests are mailed: with All, every system's
// but those in Except; else only those in Only.
type MailSystems struct {
	All    bool
	Only   []string
	Except []string
}

// MailsDue lists, oldest first and at most limit, the requests awaiting
// their customer (before their deadline, with a live confirmation link)
// of the systems sys names whose current version has had no mail: none
// a person asked for, none the console sent, and none it is sending or
// backing off from at now.
func (s *Store) MailsDue(ctx context.Context, now time.Time, sys MailSystems, limit int) ([]MailDue, error) {
	only, except := sys.Only, sys.Except
	if only == nil {
		only = []string{}
	}
	if except == nil {
		except = []string{}
	}
	rows, _ := s.pool.Query(ctx, `
		SELECT i.id AS invocation_id, i.version, i.system, i.task_id, l.customer_ref, l.selector AS link_selector, l.expires_at AS link_expires_at
		FROM invocations i
		CROSS JOIN LATERAL (SELECT selector, customer_ref, expires_at FROM confirmation_links
			WHERE invocation_id = i.id AND revoked_at IS NULL AND expires_at > $1 ORDER BY created_at DESC LIMIT 1) l
		WHERE i.state = 'awaiting_confirmation' AND (i.deadline_at IS NULL OR i.deadline_at > $1)
		  AND CASE WHEN $2::boolean THEN i.system <> ALL($4::text[]) ELSE i.system = ANY($3::text[]) END
		  AND NOT EXISTS (SELECT 1 FROM confirmation_mail_links m
			WHERE m.invocation_id = i.id AND m.version = i.version AND NOT m.unprompted)
		  AND NOT EXISTS (SELECT 1 FROM customer_mail_outbox o
			WHERE o.invocation_id = i.id AND o.version = i.version AND (o.sent_at IS NOT NULL OR o.next_at > $1))
		ORDER BY i.created_at
		LIMIT $5`, now, sys.All, only, except, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[MailDue])
	if err != nil {
		return nil, fmt.Errorf("store.MailsDue: %w", err)
	}
	return out, nil
}

// ClaimCustomerMail takes the console's mail of invocationID at version
// for the caller until leaseUntil, and returns which attempt it is. It
// returns ok false when the mail went already, another instance holds it
// or its back-off has not ended at now. The one INSERT … ON CONFLICT
// makes two instances claiming at once one: the second waits for the
// first's row and finds it taken. locale is the language an earlier
// attempt wrote the mail in ("" before one did): the mail keeps it.
func (s *Store) ClaimCustomerMail(ctx context.Context, invocationID string, version int32, now, leaseUntil time.Time) (attempt int, locale string, ok bool, _ error) {
	err := s.pool.QueryRow(ctx, `INSERT INTO customer_mail_outbox AS o (invocation_id, version, attempts, next_at, updated_at)
		VALUES ($1, $2, 1, $4, $3)
		ON CONFLICT (invocation_id, version) DO UPDATE SET attempts = o.attempts + 1, next_at = $4, updated_at = $3, outcome = ''
			WHERE o.sent_at IS NULL AND o.next_at <= $3
		RETURNING attempts, locale`, invocationID, version, now, leaseUntil).Scan(&attempt, &locale)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", false, nil
	}
	if err != nil {
		return 0, "", false, fmt.Errorf("store.ClaimCustomerMail: %w", err)
	}
	return attempt, locale, true, nil
}

// FinishCustomerMail records how a claimed attempt ended: outcome (a
// code: "sent", "too_many_mails", "no_contact_on_file", …), sentAt when
// the mail went, and otherwise nextAt, the earliest the next attempt;
// locale, when the attempt wrote the mail, is the language it was written
// in, kept from the first attempt that wrote it on.
func (s *Store) FinishCustomerMail(ctx context.Context, invocationID string, version int32, outcome string, sentAt *time.Time, nextAt, now time.Time, locale string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE customer_mail_outbox SET outcome = $3, sent_at = $4, next_at = $5, updated_at = $6,
			locale = CASE WHEN locale = '' THEN $7 ELSE locale END
		WHERE invocation_id = $1 AND version = $2`, invocationID, version, outcome, sentAt, nextAt, now, locale); err != nil {
		return fmt.Errorf("store.FinishCustomerMail: %w", err)
	}
	return nil
}

// DeleteMailLink deletes the mail link whose token hashes to tokenHash:
// one whose mail could not be sent, so nobody holds it; it then counts
// against no limit and stands for no mail of its version.
func (s *Store) DeleteMailLink(ctx context.Context, tokenHash []byte) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM confirmation_mail_links WHERE token_hash = $1`, tokenHash); err != nil {
		return fmt.Errorf("store.DeleteMailLink: %w", err)
	}
	return nil
}

// VersionMail is what was mailed of one request version: Sent when a
// mail with its link went (one someone asked for, or the console's own
// once recorded sent), else Outcome, how the console's last try ended
// ("" when it has not tried yet or is trying now).
type VersionMail struct {
	Sent    bool   `db:"sent"`
	Outcome string `db:"outcome"`
}

// MailOfVersion says what was mailed of invocationID at version.
func (s *Store) MailOfVersion(ctx context.Context, invocationID string, version int32) (VersionMail, error) {
	rows, _ := s.pool.Query(ctx, `SELECT
		EXISTS (SELECT 1 FROM confirmation_mail_links WHERE invocation_id = $1 AND version = $2 AND NOT unprompted)
			OR EXISTS (SELECT 1 FROM customer_mail_outbox WHERE invocation_id = $1 AND version = $2 AND sent_at IS NOT NULL) AS sent,
		coalesce((SELECT outcome FROM customer_mail_outbox WHERE invocation_id = $1 AND version = $2), '') AS outcome`, invocationID, version)
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[VersionMail])
	if err != nil {
		return VersionMail{}, fmt.Errorf("store.MailOfVersion: %w", err)
	}
	return out, nil
}
