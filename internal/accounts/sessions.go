package accounts

import (
	"context"
	"errors"
	"time"

	"countersign/store"
)

// SessionRows is what browser sessions need of the database (*store.Store).
type SessionRows interface {
	SessionAndUser(ctx context.Context, idHash []byte) (store.Session, *store.User, error)
	CreateSession(ctx context.Context, sess store.Session) error
	UpdateSession(ctx context.Context, idHash []byte, userID *int64, data []byte, lastSeen time.Time) error
	RevokeSession(ctx context.Context, idHash []byte, at time.Time) error
	DeleteSessionsSeenBefore(ctx context.Context, before time.Time) (int64, error)
}

// ErrNoSession is a session that is not kept (never was, or was swept) or,
// for Touch, was revoked meanwhile.
var ErrNoSession = errors.New("accounts: no such live session")

// Session is a browser session as the server keeps it (the store's row,
// named here because web names no store type). Its cookie holds a random
// id; only the id's hash is kept, so ending a session on the server ends
// it everywhere. Data is the session's values, encoded by the HTTP side.
type Session = store.Session

// Sessions keeps browser sessions.
type Sessions struct{ rows SessionRows }

// NewSessions keeps sessions in rows.
func NewSessions(rows SessionRows) *Sessions { return &Sessions{rows: rows} }

// Load reads a session, revoked or not, and the user it names (nil when it
// names none or the user is gone) in one round trip; every console request
// needs both.
func (s *Sessions) Load(ctx context.Context, idHash []byte) (Session, *User, error) {
	row, u, err := s.rows.SessionAndUser(ctx, idHash)
	if errors.Is(err, store.ErrNotFound) {
		return Session{}, nil, ErrNoSession
	}
	if err != nil {
		return Session{}, nil, err
	}
	if u == nil {
		return row, nil, nil
	}
	user := fromRow(*u)
	return row, &user, nil
}

// Create keeps a new session, live: its RevokedAt is not written.
func (s *Sessions) Create(ctx context.Context, sess Session) error {
	return s.rows.CreateSession(ctx, sess)
}

// Touch writes a live session's user and values back and marks it seen;
// ErrNoSession when it was revoked meanwhile (sign-out in another tab), so
// it stays revoked.
func (s *Sessions) Touch(ctx context.Context, idHash []byte, userID *int64, data []byte, seen time.Time) error {
	err := s.rows.UpdateSession(ctx, idHash, userID, data, seen)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNoSession
	}
	return err
}

// Revoke ends a session.
func (s *Sessions) Revoke(ctx context.Context, idHash []byte, at time.Time) error {
	return s.rows.RevokeSession(ctx, idHash, at)
}

// Sweep removes sessions last seen before the cut-off; they can no longer
// be used and nothing audits them.
func (s *Sessions) Sweep(ctx context.Context, before time.Time) (int64, error) {
	return s.rows.DeleteSessionsSeenBefore(ctx, before)
}
