package kit

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/gob"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"

	"countersign/internal/accounts"
)

// SessionStore is a gorilla sessions.Store kept in PostgreSQL. The cookie
// carries only a signed random id (256 bits); everything else stays on the
// server, so ending a session there ends it everywhere.
type SessionStore struct {
	sessions *accounts.Sessions
	codecs   []securecookie.Codec
	options  sessions.Options
	idle     time.Duration
	absolute time.Duration
	now      func() time.Time
}

// SessionConfig sets the cookie and the timeouts.
type SessionConfig struct {
	// KeyPairs are hash/encryption key pairs, newest first; older pairs are
	// still accepted, so keys can rotate without signing everyone out.
	KeyPairs [][]byte
	Secure   bool
	Idle     time.Duration
	Absolute time.Duration
	Now      func() time.Time
}

const (
	sessionCookie = "cs_session"
	KeyUserID     = "user_id"
	// KeyIdentifiedBy says how the signed-in person proved who they are:
	// "password" or "oidc", then "+totp" or "+passkey" when a second
	// factor followed. Decisions carry it into the audit trail.
	KeyIdentifiedBy = "identified_by"
	KeyCSRF         = "csrf"
	keyFlash        = "flash"
)

// KeySignedInUntil is when a sign-in through the OpenID provider stops
// counting (the ID token's expiry, Unix seconds): after it the session is
// no longer signed in, and the person signs in again, where the provider
// and the groups decide afresh.
const KeySignedInUntil = "signed_in_until"

// KeyIdentityIssuer and KeyIdentitySubject name the person a sign-in
// through the OpenID provider identified (the issuer and the ID token's
// subject); decisions record them beside KeyIdentifiedBy.
const (
	KeyIdentityIssuer  = "identity_issuer"
	KeyIdentitySubject = "identity_subject"
)

// KeyProviderAuthAt is when the person last authenticated at the OpenID
// provider (Unix seconds): the ID token's auth_time, or when the callback
// verified it. A provider's account changes its passkeys only while this
// is fresh (sso.Fresh), since it has no console password to ask for.
const KeyProviderAuthAt = "provider_auth_at"

// NewSessionStore builds the store.
func NewSessionStore(rows accounts.SessionRows, cfg SessionConfig) *SessionStore {
	codecs := securecookie.CodecsFromPairs(cfg.KeyPairs...)
	for _, c := range codecs {
		if sc, ok := c.(*securecookie.SecureCookie); ok {
			sc.MaxAge(int(cfg.Absolute.Seconds()))
		}
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &SessionStore{
		sessions: accounts.NewSessions(rows),
		codecs:   codecs,
		// gorilla v1.4 defaults to Secure + SameSite=None, which breaks plain
		// HTTP; Lax keeps cross-site POSTs without the cookie.
		options: sessions.Options{Path: "/", HttpOnly: true, Secure: cfg.Secure, SameSite: http.SameSiteLaxMode,
			MaxAge: int(cfg.Absolute.Seconds())},
		idle:     cfg.Idle,
		absolute: cfg.Absolute,
		now:      now,
	}
}

// Get returns the request's session, loading it once per request.
func (s *SessionStore) Get(r *http.Request, name string) (*sessions.Session, error) {
	return sessions.GetRegistry(r).Get(s, name)
}

// New loads the session named by the request's cookie when it is live, else
// returns a fresh unsaved one with IsNew set.
func (s *SessionStore) New(r *http.Request, name string) (*sessions.Session, error) {
	sess := sessions.NewSession(s, name)
	opts := s.options
	sess.Options = &opts
	sess.IsNew = true
	cookie, err := r.Cookie(name)
	if err != nil {
		return sess, nil
	}
	var id string
	if err := securecookie.DecodeMulti(name, cookie.Value, &id, s.codecs...); err != nil {
		return sess, nil // a forged, expired or old-key cookie starts afresh
	}
	row, user, err := s.sessions.Load(r.Context(), HashID(id))
	if errors.Is(err, accounts.ErrNoSession) {
		return sess, nil
	}
	if err != nil {
		return sess, err
	}
	now := s.now()
	if row.RevokedAt != nil || now.Sub(row.LastSeenAt) > s.idle || now.Sub(row.CreatedAt) > s.absolute {
		return sess, nil
	}
	if len(row.Data) > 0 {
		if err := gob.NewDecoder(bytes.NewReader(row.Data)).Decode(&sess.Values); err != nil {
			return sess, fmt.Errorf("web: decode session: %w", err)
		}
	}
	sess.ID = id
	sess.IsNew = false
	sess.Values[KeyCSRF] = row.CSRFToken
	if row.UserID != nil {
		sess.Values[KeyUserID] = *row.UserID
	}
	if user != nil {
		// Read with the session, so the request needs no second query for
		// its user; never saved (encodeValues).
		sess.Values[sessionUserKey] = *user
	}
	sess.Values[lastSeenKey] = row.LastSeenAt
	return sess, nil
}

// sessionUserKey carries the user row read with the session to
// loadSession, for this request only.
const sessionUserKey = "_user"

// lastSeenKey carries the stored last-seen time to Save, so a session is
// written back at most once a minute when nothing else changed.
const lastSeenKey = "_last_seen"

// Save writes the session and its cookie. MaxAge < 0 revokes it.
func (s *SessionStore) Save(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	ctx := r.Context()
	now := s.now()
	if sess.Options.MaxAge < 0 {
		if sess.ID != "" {
			if err := s.sessions.Revoke(ctx, HashID(sess.ID), now); err != nil {
				return err
			}
		}
		http.SetCookie(w, sessions.NewCookie(sess.Name(), "", sess.Options))
		return nil
	}
	userID, _ := sess.Values[KeyUserID].(int64)
	var uid *int64
	if userID != 0 {
		uid = &userID
	}
	lastSeen, _ := sess.Values[lastSeenKey].(time.Time)
	data, err := encodeValues(sess.Values)
	if err != nil {
		return err
	}
	if sess.IsNew || sess.ID == "" {
		sess.ID = randomToken(32)
		csrf, _ := sess.Values[KeyCSRF].(string)
		if csrf == "" {
			csrf = randomToken(32)
			sess.Values[KeyCSRF] = csrf
		}
		err = s.sessions.Create(ctx, accounts.Session{IDHash: HashID(sess.ID), UserID: uid, CSRFToken: csrf, Data: data,
			IP: clientIP(r), UserAgent: truncate(r.UserAgent(), 300), CreatedAt: now, LastSeenAt: now})
		if err != nil {
			return err
		}
		sess.IsNew = false
	} else if dirty(sess) || now.Sub(lastSeen) > time.Minute {
		if err := s.sessions.Touch(ctx, HashID(sess.ID), uid, data, now); err != nil {
			return err
		}
	} else {
		return nil // the cookie is already set and unchanged
	}
	delete(sess.Values, dirtyKey)
	encoded, err := securecookie.EncodeMulti(sess.Name(), sess.ID, s.codecs...)
	if err != nil {
		return fmt.Errorf("web: encode session cookie: %w", err)
	}
	http.SetCookie(w, sessions.NewCookie(sess.Name(), encoded, sess.Options))
	return nil
}

// Regenerate gives the session a new id, ending the old one server-side;
// the caller saves the session afterwards. Sign-in calls it so that an id
// planted before sign-in is worthless after it.
func (s *SessionStore) Regenerate(ctx context.Context, sess *sessions.Session) error {
	if sess.ID != "" && !sess.IsNew {
		if err := s.sessions.Revoke(ctx, HashID(sess.ID), s.now()); err != nil {
			return err
		}
	}
	sess.ID = ""
	sess.IsNew = true
	delete(sess.Values, KeyCSRF)
	delete(sess.Values, KeyUserID)
	delete(sess.Values, sessionUserKey)
	delete(sess.Values, KeyIdentifiedBy)
	delete(sess.Values, KeySignedInUntil)
	delete(sess.Values, KeyIdentityIssuer)
	delete(sess.Values, KeyIdentitySubject)
	delete(sess.Values, KeyProviderAuthAt)
	return nil
}

// dirtyKey marks a session whose values changed in this request.
const dirtyKey = "_dirty"

func MarkDirty(sess *sessions.Session) { sess.Values[dirtyKey] = true }

func dirty(sess *sessions.Session) bool { d, _ := sess.Values[dirtyKey].(bool); return d }

func encodeValues(values map[any]any) ([]byte, error) {
	keep := make(map[any]any, len(values))
	for k, v := range values {
		switch k {
		case KeyCSRF, KeyUserID, lastSeenKey, dirtyKey, sessionUserKey:
			continue // columns of their own, or bookkeeping
		}
		keep[k] = v
	}
	if len(keep) == 0 {
		return []byte{}, nil
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(keep); err != nil {
		return nil, fmt.Errorf("web: encode session: %w", err)
	}
	return buf.Bytes(), nil
}

func HashID(id string) []byte {
	sum := sha256.Sum256([]byte(id))
	return sum[:]
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// clientIP is the address Echo's IPExtractor decided on, stored in the
// request context by the server's first middleware.
func clientIP(r *http.Request) string {
	ip, _ := r.Context().Value(ipKey{}).(string)
	return ip
}

type ipKey struct{}

// Sweep deletes sessions that can no longer be used: idle past the idle
// timeout or older than the absolute one.
func (s *SessionStore) Sweep(ctx context.Context) (int64, error) {
	return s.sessions.Sweep(ctx, s.now().Add(-max(s.idle, s.absolute)))
}
