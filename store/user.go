package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is a row of users.
type User struct {
	ID           int64      `db:"id"`
	Email        string     `db:"email"`
	Name         string     `db:"name"`
	Role         string     `db:"role"`
	PasswordHash string     `db:"password_hash"`
	DisabledAt   *time.Time `db:"disabled_at"`
	CreatedAt    time.Time  `db:"created_at"`
	UpdatedAt    time.Time  `db:"updated_at"`
}

const userColumns = `id, email, name, role, password_hash, disabled_at, created_at, updated_at`

// NewUser is what CreateUser needs.
type NewUser struct {
	Email, Name, Role, PasswordHash string
	At                              time.Time
}

// CreateUser inserts a user; ErrConflict when the e-mail is taken.
func (s *Store) CreateUser(ctx context.Context, u NewUser) (User, error) {
	rows, _ := s.pool.Query(ctx, `
		INSERT INTO users (email, name, role, password_hash, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5)
		RETURNING `+userColumns, u.Email, u.Name, u.Role, u.PasswordHash, u.At)
	user, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User])
	if isUniqueViolation(err) {
		return User{}, fmt.Errorf("store.CreateUser(%q): %w", u.Email, ErrConflict)
	}
	if err != nil {
		return User{}, fmt.Errorf("store.CreateUser(%q): %w", u.Email, err)
	}
	return user, nil
}

// UserByEmail finds a user by lower-case e-mail.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+userColumns+` FROM users WHERE email = $1`, email)
	u, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User])
	if err != nil {
		return User{}, fmt.Errorf("store.UserByEmail: %w", notFound(err, "user"))
	}
	return u, nil
}

// UserByID finds a user by id.
func (s *Store) UserByID(ctx context.Context, id int64) (User, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id)
	u, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[User])
	if err != nil {
		return User{}, fmt.Errorf("store.UserByID(%d): %w", id, notFound(err, "user"))
	}
	return u, nil
}

// ListUsers returns every user, admins first, then by e-mail.
func (s *Store) ListUsers(ctx context.Context) ([]User, error) {
	rows, _ := s.pool.Query(ctx, `SELECT `+userColumns+` FROM users
		ORDER BY array_position(ARRAY['admin','manager','agent','customer'], role), email`)
	users, err := pgx.CollectRows(rows, pgx.RowToStructByName[User])
	if err != nil {
		return nil, fmt.Errorf("store.ListUsers: %w", err)
	}
	return users, nil
}

// SetUserRole changes a user's role.
func (s *Store) SetUserRole(ctx context.Context, id int64, role string, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE users SET role = $2, updated_at = $3 WHERE id = $1`, id, role, at)
	if err != nil {
		return fmt.Errorf("store.SetUserRole(%d): %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store.SetUserRole(%d): %w", id, &NotFoundError{What: "user"})
	}
	return nil
}

// SetUserDisabled disables (ending every session in the same transaction)
// or re-enables a user.
func (s *Store) SetUserDisabled(ctx context.Context, id int64, disabled bool, at time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE users SET disabled_at = CASE WHEN $2 THEN $3::timestamptz END, updated_at = $3
			WHERE id = $1`, id, disabled, at)
		if err != nil {
			return fmt.Errorf("store.SetUserDisabled(%d): %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("store.SetUserDisabled(%d): %w", id, &NotFoundError{What: "user"})
		}
		if disabled {
			return revokeUserSessions(ctx, tx, id, at, nil)
		}
		return nil
	})
}

// SetUserPassword stores a new password hash and ends every session of the
// user except keep (the one that made the change), in one transaction.
func (s *Store) SetUserPassword(ctx context.Context, id int64, hash string, keep []byte, at time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE users SET password_hash = $2, updated_at = $3 WHERE id = $1`, id, hash, at)
		if err != nil {
			return fmt.Errorf("store.SetUserPassword(%d): %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("store.SetUserPassword(%d): %w", id, &NotFoundError{What: "user"})
		}
		return revokeUserSessions(ctx, tx, id, at, keep)
	})
}
