package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrBusy is returned when a transaction gave up waiting for a row lock
// another session holds (after LockTimeout): the caller may come back later.
var ErrBusy = errors.New("store: row busy")

// Tx is one database transaction. Domain code that must change several
// rows atomically (a state change and its audit event) runs its steps on a
// Tx inside InTx; every SQL statement is still a method here.
type Tx struct {
	tx pgx.Tx
}

// InTx runs fn in a transaction, committing when it returns nil.
func (s *Store) InTx(ctx context.Context, fn func(*Tx) error) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(&Tx{tx: tx}) })
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available
			return fmt.Errorf("store: transaction: %w: %w", ErrBusy, err)
		}
		return fmt.Errorf("store: transaction: %w", err)
	}
	return nil
}

// LockTimeout bounds how long each later statement of the transaction waits
// for a row lock; past it the statement fails and InTx returns ErrBusy.
func (t *Tx) LockTimeout(ctx context.Context, d time.Duration) error {
	if _, err := t.tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", fmt.Sprintf("%dms", max(d.Milliseconds(), 1))); err != nil {
		return fmt.Errorf("store: lock timeout: %w", err)
	}
	return nil
}

// Notify sends a PostgreSQL notification when the transaction commits.
func (t *Tx) Notify(ctx context.Context, channel, payload string) error {
	if _, err := t.tx.Exec(ctx, "SELECT pg_notify($1, $2)", channel, payload); err != nil {
		return fmt.Errorf("store: notify %s: %w", channel, err)
	}
	return nil
}

// AdvisoryLock takes a transaction-scoped advisory lock on key, serialising
// transactions that would otherwise race on a row that does not exist yet.
func (t *Tx) AdvisoryLock(ctx context.Context, key string) error {
	if _, err := t.tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", key); err != nil {
		return fmt.Errorf("store: advisory lock: %w", err)
	}
	return nil
}
