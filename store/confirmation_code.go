package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

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

// CodeCap is one bound of a sliding window: at most Max since Since.
type CodeCap struct {
	Since time.Time
	Max   int
}

// codeLock serialises every statement that counts codes or wrong codes.
// One lock for all customers keeps the global bound exact too; a code check
// holds it for a few short statements.
const codeLock = "confirmation_codes"

// InsertConfirmationCode stores a new code for a link of request
// invocationID unless caps are reached (codes and link mails together,
// per customer and per that request): then it returns ErrLimit, or ErrRequestLimit for the
// request's own cap, with where and when the newest mail counted went
// (SentTo, CreatedAt), for the page to say. Earlier live codes stay valid
// until they expire or one is used: a new code must not retire a code the
// customer holds. The count and the insert hold one lock, so concurrent
// requests cannot pass a cap together.
func (s *Store) InsertConfirmationCode(ctx context.Context, c ConfirmationCode, invocationID string, caps MailCaps) (ConfirmationCode, error) {
	var out ConfirmationCode
	var limit error
	err := s.InTx(ctx, func(tx *Tx) error {
		if err := tx.advisoryLock(ctx, codeLock); err != nil {
			return err
		}
		// Link mails count too: both fill the same inbox.
		newest, err := tx.capMails(ctx, c.CustomerRef, invocationID, caps)
		if errors.Is(err, ErrLimit) {
			limit = err
			out.SentTo, out.CreatedAt = newest.SentTo, newest.At
			return nil
		}
		if err != nil {
			return err
		}
		rows, _ := tx.tx.Query(ctx, `
			INSERT INTO confirmation_codes (link_selector, customer_ref, sent_to, salt, code_hash, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+confirmationCodeColumns,
			c.LinkSelector, c.CustomerRef, c.SentTo, c.Salt, c.CodeHash, c.CreatedAt, c.ExpiresAt)
		out, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[ConfirmationCode])
		return err
	})
	if err != nil {
		return ConfirmationCode{}, fmt.Errorf("store.InsertConfirmationCode: %w", err)
	}
	if limit != nil {
		return out, fmt.Errorf("store.InsertConfirmationCode: %w", limit)
	}
	return out, nil
}

// DeleteConfirmationCode deletes the code id: one whose mail could not
// be sent, so nobody holds it and it counts against no limit.
func (s *Store) DeleteConfirmationCode(ctx context.Context, id int64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM confirmation_codes WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store.DeleteConfirmationCode: %w", err)
	}
	return nil
}

// CodeGuessCaps bound wrong codes: per customer across all their links,
// per assistant across all its tasks' links, and across everyone.
type CodeGuessCaps struct {
	Customer  []CodeCap
	Assistant []CodeCap
	Global    []CodeCap
}

// CodeGuesser is whose tries a code check counts against: the link's
// customer, and the assistant whose task made the link (empty for a task
// no assistant opened).
type CodeGuesser struct {
	CustomerRef string
	AssistantID string
}

// CodeTry is what TryConfirmationCode found.
type CodeTry struct {
	// Right says a live code of the link matched; Code is that code, now
	// used.
	Right bool
	Code  ConfirmationCode
	// MissesLeft is, after a wrong code, how many more wrong codes the
	// customer may try before the tightest cap closes.
	MissesLeft int
}

// TryConfirmationCode checks a code typed on the link page. In one
// transaction under the codes' lock it counts the customer's, the
// assistant's and everyone's wrong codes in caps' windows — if any cap is full it compares nothing and
// returns ErrLimit —, then hands the link's live codes (unused, unexpired
// at `at`) to match. A match is marked used and the link's other live codes
// retired; no match is recorded as a wrong code of who before the
// transaction ends. Concurrent tries queue on the lock, so no more wrong
// codes are ever compared than the caps allow. ErrNotFound means the link
// has no live code (nothing was compared or counted).
func (s *Store) TryConfirmationCode(ctx context.Context, selector string, who CodeGuesser, at time.Time, caps CodeGuessCaps,
	match func(ConfirmationCode) bool) (CodeTry, error) {
	var out CodeTry
	err := s.InTx(ctx, func(tx *Tx) error {
		if err := tx.advisoryLock(ctx, codeLock); err != nil {
			return err
		}
		left := -1
		count := func(q string, args []any, caps []CodeCap) error {
			for _, cp := range caps {
				var n int
				if err := tx.tx.QueryRow(ctx, q, append(args, cp.Since)...).Scan(&n); err != nil {
					return err
				}
				if n >= cp.Max {
					return ErrLimit
				}
				if l := cp.Max - n - 1; left < 0 || l < left {
					left = l
				}
			}
			return nil
		}
		if err := count(`SELECT count(*) FROM confirmation_code_misses WHERE customer_ref = $1 AND at >= $2`,
			[]any{who.CustomerRef}, caps.Customer); err != nil {
			return err
		}
		if who.AssistantID != "" {
			if err := count(`SELECT count(*) FROM confirmation_code_misses WHERE assistant_id = $1 AND at >= $2`,
				[]any{who.AssistantID}, caps.Assistant); err != nil {
				return err
			}
		}
		if err := count(`SELECT count(*) FROM confirmation_code_misses WHERE at >= $1`, nil, caps.Global); err != nil {
			return err
		}
		rows, _ := tx.tx.Query(ctx, `SELECT `+confirmationCodeColumns+` FROM confirmation_codes
			WHERE link_selector = $1 AND used_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id DESC`, selector, at)
		live, err := pgx.CollectRows(rows, pgx.RowToStructByName[ConfirmationCode])
		if err != nil {
			return err
		}
		if len(live) == 0 {
			return &NotFoundError{What: "live code"}
		}
		for _, c := range live {
			if !match(c) {
				continue
			}
			if _, err := tx.tx.Exec(ctx, `UPDATE confirmation_codes SET used_at = $2, attempts = attempts + 1 WHERE id = $1`, c.ID, at); err != nil {
				return err
			}
			// The request is proved: the link's other codes have done their job.
			if _, err := tx.tx.Exec(ctx, `UPDATE confirmation_codes SET expires_at = least(expires_at, $2)
				WHERE link_selector = $1 AND used_at IS NULL`, selector, at); err != nil {
				return err
			}
			c.UsedAt = &at
			out = CodeTry{Right: true, Code: c}
			return nil
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE confirmation_codes SET attempts = least(attempts + 1, 32767)
			WHERE link_selector = $1 AND used_at IS NULL AND expires_at > $2`, selector, at); err != nil {
			return err
		}
		if _, err := tx.tx.Exec(ctx, `INSERT INTO confirmation_code_misses (customer_ref, assistant_id, at) VALUES ($1, nullif($2, ''), $3)`,
			who.CustomerRef, who.AssistantID, at); err != nil {
			return err
		}
		out = CodeTry{MissesLeft: max(left, 0)}
		return nil
	})
	if err != nil {
		return CodeTry{}, fmt.Errorf("store.TryConfirmationCode: %w", err)
	}
	return out, nil
}
