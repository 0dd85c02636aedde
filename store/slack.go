package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SlackLink ties a Slack user (of one workspace) to a console account.
type SlackLink struct {
	Team     string    `db:"slack_team"`
	User     string    `db:"slack_user"`
	UserID   int64     `db:"user_id"`
	How      string    `db:"how"` // "code" or "email"
	LinkedAt time.Time `db:"linked_at"`
}

// SlackLinkOf returns the console account linked to a Slack user, or
// ErrNotFound.
func (s *Store) SlackLinkOf(ctx context.Context, team, user string) (SlackLink, error) {
	rows, _ := s.pool.Query(ctx, `SELECT slack_team, slack_user, user_id, how, linked_at FROM slack_links
		WHERE slack_team = $1 AND slack_user = $2`, team, user)
	l, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[SlackLink])
	if errors.Is(err, pgx.ErrNoRows) {
		return SlackLink{}, &NotFoundError{What: "Slack link"}
	}
	if err != nil {
		return SlackLink{}, fmt.Errorf("store.SlackLinkOf(%s, %s): %w", team, user, err)
	}
	return l, nil
}

// SlackLinksOfUser lists the Slack users linked to a console account.
func (s *Store) SlackLinksOfUser(ctx context.Context, userID int64) ([]SlackLink, error) {
	rows, _ := s.pool.Query(ctx, `SELECT slack_team, slack_user, user_id, how, linked_at FROM slack_links
		WHERE user_id = $1 ORDER BY linked_at`, userID)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[SlackLink])
	if err != nil {
		return nil, fmt.Errorf("store.SlackLinksOfUser(%d): %w", userID, err)
	}
	return out, nil
}

// SlackLinkedError says a Slack user is linked to another console account
// already: a link never moves by itself (the account it is linked to
// unlinks it first). It is ErrConflict.
type SlackLinkedError struct {
	Team, User string
}

// Error names the Slack user (team/user) that is linked elsewhere.
func (e *SlackLinkedError) Error() string {
	return "the Slack user " + e.Team + "/" + e.User + " is linked to another account"
}

// Unwrap makes the error ErrConflict.
func (e *SlackLinkedError) Unwrap() error { return ErrConflict }

// LinkSlackUser links a Slack user to a console account. A Slack user
// linked to that account already stays as they are; one linked to another
// account is a *SlackLinkedError and nothing changes.
func (s *Store) LinkSlackUser(ctx context.Context, l SlackLink) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return insertSlackLink(ctx, tx, l) })
	if err != nil {
		return fmt.Errorf("store.LinkSlackUser(%s, %s): %w", l.Team, l.User, err)
	}
	return nil
}

// insertSlackLink links l's Slack user unless they are linked already:
// the key (slack_team, slack_user) makes the first of two links at once
// win; the other, waiting on it, then reads whose it is.
func insertSlackLink(ctx context.Context, tx pgx.Tx, l SlackLink) error {
	tag, err := tx.Exec(ctx, `INSERT INTO slack_links (slack_team, slack_user, user_id, how, linked_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (slack_team, slack_user) DO NOTHING`,
		l.Team, l.User, l.UserID, l.How, l.LinkedAt)
	if err != nil || tag.RowsAffected() == 1 {
		return err
	}
	var owner int64
	if err := tx.QueryRow(ctx, `SELECT user_id FROM slack_links WHERE slack_team = $1 AND slack_user = $2`,
		l.Team, l.User).Scan(&owner); err != nil {
		return err
	}
	if owner != l.UserID {
		return &SlackLinkedError{Team: l.Team, User: l.User}
	}
	return nil
}

// UnlinkSlackUser removes a Slack user's link to console account userID;
// ErrNotFound when there is no such link.
func (s *Store) UnlinkSlackUser(ctx context.Context, team, user string, userID int64) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM slack_links WHERE slack_team = $1 AND slack_user = $2 AND user_id = $3`, team, user, userID)
	if err != nil {
		return fmt.Errorf("store.UnlinkSlackUser(%s, %s): %w", team, user, err)
	}
	if tag.RowsAffected() == 0 {
		return &NotFoundError{What: "Slack link"}
	}
	return nil
}

// IssueSlackLinkCode keeps a new link code's hash for a Slack user, unless
// one was issued to them after notBefore: then it answers ErrLimit and
// nothing is kept (one code a Slack user per interval).
func (s *Store) IssueSlackLinkCode(ctx context.Context, hash []byte, team, user string, now, expires, notBefore time.Time) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO slack_link_codes (code_hash, slack_team, slack_user, created_at, expires_at)
		SELECT $1, $2, $3, $4, $5
		WHERE NOT EXISTS (SELECT 1 FROM slack_link_codes WHERE slack_team = $2 AND slack_user = $3 AND created_at > $6)`,
		hash, team, user, now, expires, notBefore)
	if err != nil {
		return fmt.Errorf("store.IssueSlackLinkCode(%s, %s): %w", team, user, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrLimit
	}
	return nil
}

// RedeemSlackLinkCode uses a link code for console account userID: an
// unused, unexpired code links its Slack user to the account (and is used
// up); any other code is a miss, counted against the account. A code whose
// Slack user is linked to another account is a *SlackLinkedError, and the
// code stays unused (it links once that account has unlinked). With
// maxMisses misses since missesSince it answers ErrLimit before comparing;
// a wrong code answers ErrNotFound.
func (s *Store) RedeemSlackLinkCode(ctx context.Context, hash []byte, userID int64, now, missesSince time.Time, maxMisses int) (SlackLink, error) {
	var link SlackLink
	miss := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The account's row is locked, so two tries at once count in turn.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, userID); err != nil {
			return err
		}
		var misses int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM slack_link_misses WHERE user_id = $1 AND at > $2`,
			userID, missesSince).Scan(&misses); err != nil {
			return err
		}
		if misses >= maxMisses {
			return ErrLimit
		}
		err := tx.QueryRow(ctx, `UPDATE slack_link_codes SET used_at = $2, used_by = $3
			WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2
			RETURNING slack_team, slack_user`, hash, now, userID).Scan(&link.Team, &link.User)
		if errors.Is(err, pgx.ErrNoRows) {
			miss = true
			_, err = tx.Exec(ctx, `INSERT INTO slack_link_misses (user_id, at) VALUES ($1, $2)`, userID, now)
			return err
		}
		if err != nil {
			return err
		}
		link.UserID, link.How, link.LinkedAt = userID, "code", now
		return insertSlackLink(ctx, tx, link)
	})
	var linked *SlackLinkedError
	switch {
	case errors.Is(err, ErrLimit):
		return SlackLink{}, ErrLimit
	case errors.As(err, &linked):
		return SlackLink{}, fmt.Errorf("store.RedeemSlackLinkCode(%d): %w", userID, err)
	case err != nil:
		return SlackLink{}, fmt.Errorf("store.RedeemSlackLinkCode(%d): %w", userID, err)
	case miss:
		return SlackLink{}, &NotFoundError{What: "live link code"}
	}
	return link, nil
}

// SeeSlackRequest records a signed request from Slack by its signature and
// reports whether it is the first time: false means a replay. Requests
// sent before forgetBefore (outside the signature window, refused anyway)
// are forgotten.
func (s *Store) SeeSlackRequest(ctx context.Context, signature []byte, sentAt, forgetBefore time.Time) (bool, error) {
	if _, err := s.pool.Exec(ctx, `DELETE FROM slack_requests_seen WHERE sent_at < $1`, forgetBefore); err != nil {
		return false, fmt.Errorf("store.SeeSlackRequest: forget: %w", err)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO slack_requests_seen (signature, sent_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		signature, sentAt)
	if err != nil {
		return false, fmt.Errorf("store.SeeSlackRequest: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// SlackMessage is the channel message of one card.
type SlackMessage struct {
	InvocationID string `db:"invocation_id"`
	Channel      string `db:"channel"`
	TS           string `db:"ts"`
	// Shown is what the message shows (see SlackShown); Now is what it
	// would show now.
	Shown string `db:"shown"`
	Now   string `db:"now_shown"`
}

// slackShown is what a card's message shows, as SQL over invocation i and
// its live claim c; the Slack bot computes the same text from a card.
const slackShown = `i.state || ':' || i.version || ':' || coalesce(c.user_id, 0)`

// SlackCardsToPost lists the cards awaiting approval that arrived after
// since and have no message yet (none claimed, or a claim older than
// SlackPostClaim that never posted), oldest first.
func (s *Store) SlackCardsToPost(ctx context.Context, since, now time.Time, limit int) ([]string, error) {
	rows, _ := s.pool.Query(ctx, `SELECT i.id FROM invocations i
		WHERE i.state = 'awaiting_approval' AND i.created_at > $1
		  AND NOT EXISTS (SELECT 1 FROM slack_messages m WHERE m.invocation_id = i.id
			AND (m.ts IS NOT NULL OR m.posted_at >= $3))
		ORDER BY i.created_at LIMIT $2`, since, limit, now.Add(-SlackPostClaim))
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("store.SlackCardsToPost: %w", err)
	}
	return ids, nil
}

// SlackPostClaim is how long a claimed post may go unposted before another
// instance takes it over: the claimant died, froze or lost its database
// between claiming and recording the message.
const SlackPostClaim = 2 * time.Minute

// ClaimSlackPost takes the first post of a card's message for this
// instance, or one claimed more than SlackPostClaim ago and never posted;
// false means another instance posts it.
func (s *Store) ClaimSlackPost(ctx context.Context, invocationID, channel string, now time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO slack_messages AS m (invocation_id, channel, posted_at, updated_at)
		VALUES ($1, $2, $3, $3)
		ON CONFLICT (invocation_id) DO UPDATE SET channel = EXCLUDED.channel, posted_at = EXCLUDED.posted_at,
			updated_at = EXCLUDED.updated_at
		WHERE m.ts IS NULL AND m.posted_at < $4`, invocationID, channel, now, now.Add(-SlackPostClaim))
	if err != nil {
		return false, fmt.Errorf("store.ClaimSlackPost(%s): %w", invocationID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// DropSlackPost forgets a claimed post that failed, so it is tried again.
func (s *Store) DropSlackPost(ctx context.Context, invocationID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM slack_messages WHERE invocation_id = $1 AND ts IS NULL`, invocationID); err != nil {
		return fmt.Errorf("store.DropSlackPost(%s): %w", invocationID, err)
	}
	return nil
}

// SlackPosted records a card's posted message: the channel's ID, the
// message's timestamp and what it shows.
func (s *Store) SlackPosted(ctx context.Context, invocationID, channel, ts, shown string, open bool, now time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE slack_messages SET channel = $2, ts = $3, shown = $4, open = $5, updated_at = $6
		WHERE invocation_id = $1`, invocationID, channel, ts, shown, open, now); err != nil {
		return fmt.Errorf("store.SlackPosted(%s): %w", invocationID, err)
	}
	return nil
}

// SlackMessageOf returns a card's message, with what it would show now,
// or ErrNotFound when it has none (yet).
func (s *Store) SlackMessageOf(ctx context.Context, invocationID string, now time.Time) (SlackMessage, error) {
	rows, _ := s.pool.Query(ctx, `SELECT m.invocation_id, m.channel, m.ts, m.shown, `+slackShown+` AS now_shown
		FROM slack_messages m JOIN invocations i ON i.id = m.invocation_id
		LEFT JOIN approval_claims c ON c.invocation_id = i.id AND c.expires_at > $2
		WHERE m.invocation_id = $1 AND m.ts IS NOT NULL`, invocationID, now)
	m, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[SlackMessage])
	if errors.Is(err, pgx.ErrNoRows) {
		return SlackMessage{}, &NotFoundError{What: "Slack message"}
	}
	if err != nil {
		return SlackMessage{}, fmt.Errorf("store.SlackMessageOf(%s): %w", invocationID, err)
	}
	return m, nil
}

// StaleSlackMessages lists open messages whose card moved since they were
// posted or updated: what they show is not what they would show now.
func (s *Store) StaleSlackMessages(ctx context.Context, now time.Time, limit int) ([]SlackMessage, error) {
	rows, _ := s.pool.Query(ctx, `SELECT m.invocation_id, m.channel, m.ts, m.shown, `+slackShown+` AS now_shown
		FROM slack_messages m JOIN invocations i ON i.id = m.invocation_id
		LEFT JOIN approval_claims c ON c.invocation_id = i.id AND c.expires_at > $1
		WHERE m.open AND m.ts IS NOT NULL AND m.shown <> `+slackShown+`
		ORDER BY m.updated_at LIMIT $2`, now, limit)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[SlackMessage])
	if err != nil {
		return nil, fmt.Errorf("store.StaleSlackMessages: %w", err)
	}
	return out, nil
}

// ClaimSlackUpdate moves a message from showing was to showing shown, for
// this instance to update it in Slack; false means another instance
// updated it first (or it moved again).
func (s *Store) ClaimSlackUpdate(ctx context.Context, invocationID, was, shown string, open bool, now time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE slack_messages SET shown = $3, open = $4, updated_at = $5
		WHERE invocation_id = $1 AND shown = $2 AND ts IS NOT NULL`, invocationID, was, shown, open, now)
	if err != nil {
		return false, fmt.Errorf("store.ClaimSlackUpdate(%s): %w", invocationID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// SlackEmailMatch reports whether an admin turned on linking Slack users by
// their confirmed e-mail address.
func (s *Store) SlackEmailMatch(ctx context.Context) (bool, error) {
	var on bool
	if err := s.pool.QueryRow(ctx, `SELECT email_match FROM slack_settings`).Scan(&on); err != nil {
		return false, fmt.Errorf("store.SlackEmailMatch: %w", err)
	}
	return on, nil
}

// SetSlackEmailMatch turns linking by e-mail address on or off, naming the
// admin who did.
func (s *Store) SetSlackEmailMatch(ctx context.Context, on bool, by int64, at time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE slack_settings SET email_match = $1, changed_by = $2, changed_at = $3`, on, by, at); err != nil {
		return fmt.Errorf("store.SetSlackEmailMatch: %w", err)
	}
	return nil
}
