package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SSOSignIn is a row of sso_sign_ins: one sign-in through the OpenID
// provider, begun and not yet finished.
type SSOSignIn struct {
	StateHash    []byte    `db:"state_hash"`
	BrowserHash  []byte    `db:"browser_hash"`
	Nonce        string    `db:"nonce"`
	CodeVerifier string    `db:"code_verifier"`
	NextPath     string    `db:"next_path"`
	CreatedAt    time.Time `db:"created_at"`
	ExpiresAt    time.Time `db:"expires_at"`
}

// BeginSSOSignIn stores a sign-in sent to the provider, and sweeps the
// rows that expired before at.
func (s *Store) BeginSSOSignIn(ctx context.Context, in SSOSignIn) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM sso_sign_ins WHERE expires_at < $1`, in.CreatedAt); err != nil {
		return fmt.Errorf("store.BeginSSOSignIn: sweep: %w", err)
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO sso_sign_ins (state_hash, browser_hash, nonce, code_verifier, next_path, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		in.StateHash, in.BrowserHash, in.Nonce, in.CodeVerifier, in.NextPath, in.CreatedAt, in.ExpiresAt)
	if err != nil {
		return fmt.Errorf("store.BeginSSOSignIn: %w", err)
	}
	return nil
}

// TakeSSOSignIn deletes and returns the sign-in whose state hashes to
// stateHash, so a state is used at most once; a NotFoundError when there is
// none (never issued, or already used). The caller checks its expiry and
// browser.
func (s *Store) TakeSSOSignIn(ctx context.Context, stateHash []byte) (SSOSignIn, error) {
	rows, _ := s.pool.Query(ctx, `
		DELETE FROM sso_sign_ins WHERE state_hash = $1
		RETURNING state_hash, browser_hash, nonce, code_verifier, next_path, created_at, expires_at`, stateHash)
	in, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[SSOSignIn])
	if err != nil {
		return SSOSignIn{}, fmt.Errorf("store.TakeSSOSignIn: %w", notFound(err, "sign-in"))
	}
	return in, nil
}

// StaffSignIn is what the provider said about a person at sign-in, with the
// role the console decided from their groups.
type StaffSignIn struct {
	Issuer, Subject string
	Email, Name     string
	Role            string
	Groups          []string
	// PasswordHash is stored only on a new account: a hash of a password
	// nobody knows, so the account cannot sign in with a password.
	PasswordHash string
	At           time.Time
}

// SignInStaffIdentity finds the account of (issuer, subject), creating it
// and the identity on the first sign-in, and sets its role and name from in.
// created says whether the account is new. ErrConflict when a new identity's
// e-mail belongs to an account of its own already (a password account, or
// another provider's): linking them is an admin's decision, not the
// provider's.
func (s *Store) SignInStaffIdentity(ctx context.Context, in StaffSignIn) (u User, created bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Two first sign-ins of one person at once create one account.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('staff_identity ' || $1 || ' ' || $2, 0))`,
			in.Issuer, in.Subject); err != nil {
			return err
		}
		var userID int64
		err := tx.QueryRow(ctx, `SELECT user_id FROM staff_identities WHERE issuer = $1 AND subject = $2`,
			in.Issuer, in.Subject).Scan(&userID)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			rows, _ := tx.Query(ctx, `
				INSERT INTO users (email, name, role, password_hash, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $5, $5)
				RETURNING `+userColumns, in.Email, in.Name, in.Role, in.PasswordHash, in.At)
			u, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User])
			if isUniqueViolation(err) {
				return ErrConflict
			}
			if err != nil {
				return err
			}
			created = true
			_, err = tx.Exec(ctx, `
				INSERT INTO staff_identities (issuer, subject, user_id, groups, created_at, last_sign_in_at)
				VALUES ($1, $2, $3, $4, $5, $5)`, in.Issuer, in.Subject, u.ID, in.Groups, in.At)
			return err
		case err != nil:
			return err
		}
		rows, _ := tx.Query(ctx, `
			UPDATE users SET role = $2, name = $3, updated_at = $4 WHERE id = $1
			RETURNING `+userColumns, userID, in.Role, in.Name, in.At)
		if u, err = pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User]); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE staff_identities SET groups = $3, last_sign_in_at = $4 WHERE issuer = $1 AND subject = $2`,
			in.Issuer, in.Subject, in.Groups, in.At)
		return err
	})
	if err != nil {
		return User{}, false, fmt.Errorf("store.SignInStaffIdentity(%q): %w", in.Subject, err)
	}
	return u, created, nil
}

// EndStaffIdentitySessions ends every session of the account of (issuer,
// subject), if there is one: the provider no longer lets the person in.
func (s *Store) EndStaffIdentitySessions(ctx context.Context, issuer, subject string, at time.Time) error {
	var userID int64
	err := s.pool.QueryRow(ctx, `SELECT user_id FROM staff_identities WHERE issuer = $1 AND subject = $2`,
		issuer, subject).Scan(&userID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store.EndStaffIdentitySessions(%q): %w", subject, err)
	}
	return revokeUserSessions(ctx, s.pool, userID, at, nil)
}

// StaffIssuers maps each account the OpenID provider manages to the
// provider's issuer, for the admin's list of users.
func (s *Store) StaffIssuers(ctx context.Context) (map[int64]string, error) {
	rows, _ := s.pool.Query(ctx, `SELECT user_id, issuer FROM staff_identities`)
	out := map[int64]string{}
	var id int64
	var issuer string
	_, err := pgx.ForEachRow(rows, []any{&id, &issuer}, func() error {
		out[id] = issuer
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store.StaffIssuers: %w", err)
	}
	return out, nil
}

// StaffIssuerOf is the issuer of the provider that manages the user's
// account; "" when a password account.
func (s *Store) StaffIssuerOf(ctx context.Context, userID int64) (string, error) {
	var issuer string
	err := s.pool.QueryRow(ctx, `SELECT issuer FROM staff_identities WHERE user_id = $1`, userID).Scan(&issuer)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store.StaffIssuerOf(%d): %w", userID, err)
	}
	return issuer, nil
}
