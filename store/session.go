package store

import (
	"context"
	"fmt"
	"time"
)

// Session is a row of sessions. The cookie's random id is never stored, only
// its hash.
type Session struct {
	IDHash     []byte     `db:"id_hash"`
	UserID     *int64     `db:"user_id"`
	CSRFToken  string     `db:"csrf_token"`
	Data       []byte     `db:"data"`
	IP         string     `db:"ip"`
	UserAgent  string     `db:"user_agent"`
	CreatedAt  time.Time  `db:"created_at"`
	LastSeenAt time.Time  `db:"last_seen_at"`
	RevokedAt  *time.Time `db:"revoked_at"`
}

// CreateSession inserts a new session.
func (s *Store) CreateSession(ctx context.Context, sess Session) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO sessions (id_hash, user_id, csrf_token, data, ip, user_agent, created_at, last_seen_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		sess.IDHash, sess.UserID, sess.CSRFToken, sess.Data, sess.IP, sess.UserAgent, sess.CreatedAt, sess.LastSeenAt)
	if err != nil {
		return fmt.Errorf("store.CreateSession: %w", err)
	}
	return nil
}

// SessionAndUser loads a session, revoked or not, and the user it names
// (nil when it names none or the user is gone) in one round trip: every
// console request needs both. The user's password hash is not read.
func (s *Store) SessionAndUser(ctx context.Context, idHash []byte) (Session, *User, error) {
	var sess Session
	var uid *int64
	var email, name, role *string
	var disabled *time.Time
	var created, updated *time.Time
	err := s.pool.QueryRow(ctx, `
		SELECT s.id_hash, s.user_id, s.csrf_token, s.data, s.ip, s.user_agent, s.created_at, s.last_seen_at, s.revoked_at,
			u.id, u.email, u.name, u.role, u.disabled_at, u.created_at, u.updated_at
		FROM sessions s LEFT JOIN users u ON u.id = s.user_id
		WHERE s.id_hash = $1`, idHash).Scan(&sess.IDHash, &sess.UserID, &sess.CSRFToken, &sess.Data, &sess.IP, &sess.UserAgent,
		&sess.CreatedAt, &sess.LastSeenAt, &sess.RevokedAt, &uid, &email, &name, &role, &disabled, &created, &updated)
	if err != nil {
		return Session{}, nil, fmt.Errorf("store.SessionAndUser: %w", notFound(err, "session"))
	}
	if uid == nil {
		return sess, nil, nil
	}
	return sess, &User{ID: *uid, Email: *email, Name: *name, Role: *role, DisabledAt: disabled, CreatedAt: *created, UpdatedAt: *updated}, nil
}

// UpdateSession stores a live session's data and last-seen time. A revoked
// session is left alone and reported as ErrNotFound, so a request racing a
// sign-out cannot bring its session back.
func (s *Store) UpdateSession(ctx context.Context, idHash []byte, userID *int64, data []byte, lastSeen time.Time) error {
	tag, err := s.pool.Exec(ctx, `
		UPDATE sessions SET user_id = $2, data = $3, last_seen_at = $4
		WHERE id_hash = $1 AND revoked_at IS NULL`, idHash, userID, data, lastSeen)
	if err != nil {
		return fmt.Errorf("store.UpdateSession: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store.UpdateSession: %w", &NotFoundError{What: "live session"})
	}
	return nil
}

// RevokeSession ends one session.
func (s *Store) RevokeSession(ctx context.Context, idHash []byte, at time.Time) error {
	if _, err := s.pool.Exec(ctx, `
		UPDATE sessions SET revoked_at = $2 WHERE id_hash = $1 AND revoked_at IS NULL`, idHash, at); err != nil {
		return fmt.Errorf("store.RevokeSession: %w", err)
	}
	return nil
}

func revokeUserSessions(ctx context.Context, db dbtx, userID int64, at time.Time, keep []byte) error {
	if _, err := db.Exec(ctx, `
		UPDATE sessions SET revoked_at = $2
		WHERE user_id = $1 AND revoked_at IS NULL AND ($3::bytea IS NULL OR id_hash <> $3)`, userID, at, keep); err != nil {
		return fmt.Errorf("store: revoke sessions of user %d: %w", userID, err)
	}
	return nil
}

// DeleteSessionsSeenBefore removes sessions last seen before the cut-off;
// they can no longer be used and nothing audits them.
func (s *Store) DeleteSessionsSeenBefore(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE last_seen_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("store.DeleteSessionsSeenBefore: %w", err)
	}
	return tag.RowsAffected(), nil
}
