package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// OAuthCode is a row of oauth_codes: an authorization code, kept as the
// SHA-256 of its secret.
type OAuthCode struct {
	Hash        []byte     `db:"hash"`
	ClientID    string     `db:"client_id"`
	UserID      int64      `db:"user_id"`
	AssistantID string     `db:"assistant_id"`
	ActsAsUser  bool       `db:"acts_as_user"`
	RedirectURI string     `db:"redirect_uri"`
	Challenge   string     `db:"challenge"`
	Resource    string     `db:"resource"`
	CreatedAt   time.Time  `db:"created_at"`
	ExpiresAt   time.Time  `db:"expires_at"`
	UsedAt      *time.Time `db:"used_at"`
	GrantID     *string    `db:"grant_id"`
}

// OAuthGrant is a row of oauth_grants: a person's consent to a client,
// the family of the tokens issued on it.
type OAuthGrant struct {
	ID          string     `db:"id"`
	ClientID    string     `db:"client_id"`
	UserID      int64      `db:"user_id"`
	AssistantID string     `db:"assistant_id"`
	ActsAsUser  bool       `db:"acts_as_user"`
	Resource    string     `db:"resource"`
	CreatedAt   time.Time  `db:"created_at"`
	ExpiresAt   time.Time  `db:"expires_at"`
	RevokedAt   *time.Time `db:"revoked_at"`
	RevokedWhy  *string    `db:"revoked_why"`
}

// OAuthToken is a row of oauth_tokens: an access or refresh token of a
// grant, kept as the SHA-256 of its secret.
type OAuthToken struct {
	Hash       []byte     `db:"hash"`
	GrantID    string     `db:"grant_id"`
	Kind       string     `db:"kind"`
	CreatedAt  time.Time  `db:"created_at"`
	ExpiresAt  time.Time  `db:"expires_at"`
	RotatedAt  *time.Time `db:"rotated_at"`
	RevokedAt  *time.Time `db:"revoked_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
}

const (
	oauthCodeColumns  = `hash, client_id, user_id, assistant_id, acts_as_user, redirect_uri, challenge, resource, created_at, expires_at, used_at, grant_id`
	oauthGrantColumns = `id, client_id, user_id, assistant_id, acts_as_user, resource, created_at, expires_at, revoked_at, revoked_why`
	oauthTokenColumns = `hash, grant_id, kind, created_at, expires_at, rotated_at, revoked_at, last_used_at`
)

// InsertOAuthCode keeps a new authorization code and the consent's event
// e in one transaction.
func (s *Store) InsertOAuthCode(ctx context.Context, c OAuthCode, e Event) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.Exec(ctx, `INSERT INTO oauth_codes (hash, client_id, user_id, assistant_id, acts_as_user,
			redirect_uri, challenge, resource, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			c.Hash, c.ClientID, c.UserID, c.AssistantID, c.ActsAsUser, c.RedirectURI, c.Challenge, c.Resource,
			c.CreatedAt, c.ExpiresAt); err != nil {
			return fmt.Errorf("store.InsertOAuthCode: %w", err)
		}
		_, err := tx.InsertEvent(ctx, e)
		return err
	})
}

// ErrReused is what spending a code or a refresh token a second time
// returns, after the grant issued on it was revoked (and committed).
var ErrReused = errors.New("store: spent already")

// ExchangeOAuthCode spends the code of hash at at, in one transaction: the
// row is locked and marked used whatever follows, so a code is spent once
// even when two exchanges race. check decides whether this exchange may
// have it (client, redirect URI, verifier, expiry); its error is returned
// after the code was spent. When it passes, grant (filled from the code
// by the caller's grantOf) and tokens are inserted. ErrNotFound for an
// unknown code; ErrReused when it was spent before (the grant made with
// it is revoked).
func (s *Store) ExchangeOAuthCode(ctx context.Context, hash []byte, at time.Time, check func(OAuthCode) error,
	grantOf func(OAuthCode) (OAuthGrant, []OAuthToken)) (OAuthGrant, error) {
	var grant OAuthGrant
	var after error
	err := s.InTx(ctx, func(tx *Tx) error {
		rows, _ := tx.tx.Query(ctx, `SELECT `+oauthCodeColumns+` FROM oauth_codes WHERE hash = $1 FOR UPDATE`, hash)
		code, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthCode])
		if err != nil {
			return fmt.Errorf("store.ExchangeOAuthCode: %w", notFound(err, "code"))
		}
		if code.UsedAt != nil {
			after = ErrReused
			if code.GrantID != nil {
				return tx.revokeGrant(ctx, *code.GrantID, "code_reused", at)
			}
			return nil
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE oauth_codes SET used_at = $2 WHERE hash = $1`, hash, at); err != nil {
			return fmt.Errorf("store.ExchangeOAuthCode: %w", err)
		}
		if after = check(code); after != nil {
			return nil
		}
		g, tokens := grantOf(code)
		if err := tx.insertGrant(ctx, g, tokens); err != nil {
			return err
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE oauth_codes SET grant_id = $2 WHERE hash = $1`, hash, g.ID); err != nil {
			return fmt.Errorf("store.ExchangeOAuthCode: %w", err)
		}
		grant = g
		return nil
	})
	if err == nil {
		err = after
	}
	return grant, err
}

func (t *Tx) insertGrant(ctx context.Context, g OAuthGrant, tokens []OAuthToken) error {
	if _, err := t.tx.Exec(ctx, `INSERT INTO oauth_grants (id, client_id, user_id, assistant_id, acts_as_user, resource,
		created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		g.ID, g.ClientID, g.UserID, g.AssistantID, g.ActsAsUser, g.Resource, g.CreatedAt, g.ExpiresAt); err != nil {
		return fmt.Errorf("store: insert grant: %w", err)
	}
	return t.insertTokens(ctx, tokens)
}

func (t *Tx) insertTokens(ctx context.Context, tokens []OAuthToken) error {
	for _, k := range tokens {
		if _, err := t.tx.Exec(ctx, `INSERT INTO oauth_tokens (hash, grant_id, kind, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5)`, k.Hash, k.GrantID, k.Kind, k.CreatedAt, k.ExpiresAt); err != nil {
			return fmt.Errorf("store: insert token: %w", err)
		}
	}
	return nil
}

func (t *Tx) revokeGrant(ctx context.Context, id, why string, at time.Time) error {
	if _, err := t.tx.Exec(ctx, `UPDATE oauth_grants SET revoked_at = $2, revoked_why = $3
		WHERE id = $1 AND revoked_at IS NULL`, id, at, why); err != nil {
		return fmt.Errorf("store: revoke grant %s: %w", id, err)
	}
	return nil
}

// RotateOAuthRefresh spends the refresh token of hash at at in one
// transaction and, when check passes on its grant, inserts the tokens
// next makes. A token spent before revokes its whole grant (committed)
// and returns ErrReused; an unknown token, an access token, or one
// revoked or expired is ErrNotFound; check's error is returned as it is,
// nothing spent.
func (s *Store) RotateOAuthRefresh(ctx context.Context, hash []byte, at time.Time, check func(OAuthGrant) error,
	next func(OAuthGrant) []OAuthToken) (OAuthGrant, error) {
	var grant OAuthGrant
	var after error
	err := s.InTx(ctx, func(tx *Tx) error {
		rows, _ := tx.tx.Query(ctx, `SELECT `+oauthTokenColumns+` FROM oauth_tokens WHERE hash = $1 AND kind = 'refresh' FOR UPDATE`, hash)
		tok, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthToken])
		if err != nil {
			return fmt.Errorf("store.RotateOAuthRefresh: %w", notFound(err, "refresh token"))
		}
		rows, _ = tx.tx.Query(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants WHERE id = $1 FOR UPDATE`, tok.GrantID)
		if grant, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthGrant]); err != nil {
			return fmt.Errorf("store.RotateOAuthRefresh: %w", err)
		}
		switch {
		case tok.RotatedAt != nil:
			after = ErrReused
			return tx.revokeGrant(ctx, grant.ID, "refresh_reused", at)
		case tok.RevokedAt != nil || grant.RevokedAt != nil || !at.Before(tok.ExpiresAt) || !at.Before(grant.ExpiresAt):
			return fmt.Errorf("store.RotateOAuthRefresh: %w", &NotFoundError{What: "refresh token"})
		}
		if err := check(grant); err != nil {
			return err
		}
		if _, err := tx.tx.Exec(ctx, `UPDATE oauth_tokens SET rotated_at = $2 WHERE hash = $1`, hash, at); err != nil {
			return fmt.Errorf("store.RotateOAuthRefresh: %w", err)
		}
		return tx.insertTokens(ctx, next(grant))
	})
	if err == nil {
		err = after
	}
	return grant, err
}

// OAuthAccess is a live access token with what it acts as: its grant, the
// name of the person who consented, whether its client is revoked or
// that person disabled (or no longer one of the staff), and whose own
// assistant the grant's assistant is (0 when it is an admin's).
type OAuthAccess struct {
	Grant         OAuthGrant
	ExpiresAt     time.Time
	UserName      string
	ClientRevoked bool
	UserDisabled  bool
	OwnerUserID   int64
}

// OAuthAccessByHash returns the access token of hash when neither it nor
// its grant is revoked or expired at at; otherwise ErrNotFound. It is
// read on every call to /mcp, so it is one statement, which also records
// the token's last use (at most once a minute).
func (s *Store) OAuthAccessByHash(ctx context.Context, hash []byte, at time.Time) (OAuthAccess, error) {
	var a OAuthAccess
	g := &a.Grant
	err := s.pool.QueryRow(ctx, `
		WITH touched AS (
			UPDATE oauth_tokens SET last_used_at = $2 WHERE hash = $1 AND kind = 'access' AND revoked_at IS NULL
				AND expires_at > $2 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute'))
		SELECT g.id, g.client_id, g.user_id, g.assistant_id, g.acts_as_user, g.resource, g.created_at, g.expires_at,
			t.expires_at, u.name, c.revoked_at IS NOT NULL, u.disabled_at IS NOT NULL OR u.role = 'customer',
			coalesce(o.user_id, 0)
		FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
			JOIN oauth_clients c ON c.id = g.client_id JOIN users u ON u.id = g.user_id
			LEFT JOIN operator_assistants o ON o.assistant_id = g.assistant_id
		WHERE t.hash = $1 AND t.kind = 'access' AND t.revoked_at IS NULL AND t.expires_at > $2 AND g.revoked_at IS NULL
			AND g.expires_at > $2`,
		hash, at).Scan(&g.ID, &g.ClientID, &g.UserID, &g.AssistantID, &g.ActsAsUser, &g.Resource, &g.CreatedAt, &g.ExpiresAt,
		&a.ExpiresAt, &a.UserName, &a.ClientRevoked, &a.UserDisabled, &a.OwnerUserID)
	if err != nil {
		return OAuthAccess{}, fmt.Errorf("store.OAuthAccessByHash: %w", notFound(err, "access token"))
	}
	return a, nil
}

// RevokeOAuthToken revokes what a client presents at the revocation
// endpoint: a refresh token revokes its whole grant, an access token
// itself; only when the token's grant belongs to clientID. It reports the
// grant touched ("" when nothing was: unknown, another client's, revoked
// already). e, when its action is set, is recorded in the same
// transaction, with the grant's id in its data's "grant_id".
func (s *Store) RevokeOAuthToken(ctx context.Context, hash []byte, clientID string, at time.Time, e func(OAuthGrant) Event) (string, error) {
	var touched string
	err := s.InTx(ctx, func(tx *Tx) error {
		var kind string
		var g OAuthGrant
		err := tx.tx.QueryRow(ctx, `SELECT t.kind, g.id, g.assistant_id, g.user_id FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
			WHERE t.hash = $1 AND g.client_id = $2 AND t.revoked_at IS NULL AND g.revoked_at IS NULL FOR UPDATE OF t`,
			hash, clientID).Scan(&kind, &g.ID, &g.AssistantID, &g.UserID)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store.RevokeOAuthToken: %w", err)
		}
		if kind == "refresh" {
			err = tx.revokeGrant(ctx, g.ID, "client_revoked_refresh_token", at)
		} else {
			_, err = tx.tx.Exec(ctx, `UPDATE oauth_tokens SET revoked_at = $2 WHERE hash = $1`, hash, at)
		}
		if err != nil {
			return fmt.Errorf("store.RevokeOAuthToken: %w", err)
		}
		touched = g.ID
		_, err = tx.InsertEvent(ctx, e(g))
		return err
	})
	return touched, err
}

// RevokeOAuthGrant revokes a grant (every token issued on it) with its
// event e in one transaction; ErrNotFound when there is no live grant id.
func (s *Store) RevokeOAuthGrant(ctx context.Context, id, why string, at time.Time, e Event) error {
	return s.InTx(ctx, func(tx *Tx) error {
		tag, err := tx.tx.Exec(ctx, `UPDATE oauth_grants SET revoked_at = $2, revoked_why = $3
			WHERE id = $1 AND revoked_at IS NULL`, id, at, why)
		if err != nil {
			return fmt.Errorf("store.RevokeOAuthGrant(%s): %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("store.RevokeOAuthGrant(%s): %w", id, &NotFoundError{What: "grant"})
		}
		_, err = tx.InsertEvent(ctx, e)
		return err
	})
}

// OAuthGrantRow is a grant as the admin's list shows it.
type OAuthGrantRow struct {
	OAuthGrant
	ClientName    string     `db:"client_name"`
	UserName      string     `db:"user_name"`
	AssistantName string     `db:"assistant_name"`
	LastUsedAt    *time.Time `db:"last_used_at"`
}

// OAuthGrants lists every grant, newest first, with its client's,
// person's and assistant's names and its tokens' last use.
func (s *Store) OAuthGrants(ctx context.Context) ([]OAuthGrantRow, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT g.id, g.client_id, g.user_id, g.assistant_id, g.acts_as_user, g.resource, g.created_at, g.expires_at,
			g.revoked_at, g.revoked_why, c.name AS client_name, u.name AS user_name, a.name AS assistant_name,
			(SELECT max(t.last_used_at) FROM oauth_tokens t WHERE t.grant_id = g.id) AS last_used_at
		FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id JOIN users u ON u.id = g.user_id
			JOIN assistants a ON a.id = g.assistant_id
		ORDER BY g.created_at DESC, g.id`)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[OAuthGrantRow])
	if err != nil {
		return nil, fmt.Errorf("store.OAuthGrants: %w", err)
	}
	return out, nil
}

// OAuthGrant returns one grant, or ErrNotFound.
func (s *Store) OAuthGrant(ctx context.Context, id string) (OAuthGrant, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+oauthGrantColumns+` FROM oauth_grants WHERE id = $1`, id)
	g, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[OAuthGrant])
	if err != nil {
		return OAuthGrant{}, fmt.Errorf("store.OAuthGrant(%s): %w", id, notFound(err, "grant"))
	}
	return g, nil
}

// OperatorAssistant returns the id of the person's own assistant, or
// ErrNotFound when they have none yet.
func (s *Store) OperatorAssistant(ctx context.Context, userID int64) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, `SELECT assistant_id FROM operator_assistants WHERE user_id = $1`, userID).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("store.OperatorAssistant(%d): %w", userID, notFound(err, "own assistant"))
	}
	return id, nil
}

// InsertOperatorAssistant adds the assistant a and binds it to the person
// as their own, in one transaction; ErrConflict when the person has one
// already (or a's name is taken).
func (s *Store) InsertOperatorAssistant(ctx context.Context, userID int64, a Assistant) error {
	return s.InTx(ctx, func(tx *Tx) error {
		_, err := tx.tx.Exec(ctx, `INSERT INTO assistants (id, name, created_by, created_at, any_customer) VALUES ($1, $2, $3, $4, true)`,
			a.ID, a.Name, userID, a.CreatedAt)
		if err == nil {
			_, err = tx.tx.Exec(ctx, `INSERT INTO operator_assistants (user_id, assistant_id) VALUES ($1, $2)`, userID, a.ID)
		}
		if isUniqueViolation(err) {
			return fmt.Errorf("store.InsertOperatorAssistant(%d): %w", userID, ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("store.InsertOperatorAssistant(%d): %w", userID, err)
		}
		return nil
	})
}

// OperatorAssistants maps each own assistant's id to its person's.
func (s *Store) OperatorAssistants(ctx context.Context) (map[string]int64, error) {
	rows, _ := s.pool.Query(ctx, `SELECT assistant_id, user_id FROM operator_assistants`)
	out := map[string]int64{}
	var id string
	var user int64
	_, err := pgx.ForEachRow(rows, []any{&id, &user}, func() error {
		out[id] = user
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store.OperatorAssistants: %w", err)
	}
	return out, nil
}
