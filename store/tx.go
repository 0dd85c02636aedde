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
	tx    pgx.Tx
	notes []notification
}

// notification is a NOTIFY a transaction asks for, sent once it commits.
type notification struct{ channel, payload string }

// InTx runs fn in a transaction, committing when it returns nil.
func (s *Store) InTx(ctx context.Context, fn func(*Tx) error) error {
	t := &Tx{}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		t.tx, t.notes = tx, t.notes[:0]
		return fn(t)
	})
	if err == nil {
		s.notify(ctx, t.notes)
	}
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

// Notify sends a PostgreSQL notification once the transaction has
// committed (a rolled-back one sends none); the same one twice is sent once.
func (t *Tx) Notify(_ context.Context, channel, payload string) error {
	n := notification{channel, payload}
	for _, have := range t.notes {
		if have == n {
			return nil
		}
	}
	t.notes = append(t.notes, n)
	return nil
}

// notify sends the notifications of a transaction that has committed, in
// one statement of their own that does not wait for the WAL to reach disk.
//
// PostgreSQL serialises the commits of transactions that sent NOTIFY: it
// holds one lock from queueing the notifications until the commit is
// durable. Sent from inside each write's transactions (an events trigger
// did, until migration 00016), they made every write commit wait its turn
// for the disk instead of sharing a flush with the others: make bench's
// samples of the writes were dominated by Lock:object in COMMIT. A
// notification carries nothing durable, so its own transaction commits
// with synchronous_commit off, and the lock is held for microseconds.
//
// If this statement fails (the server went away just after the commit),
// the listeners' reconnect wakes every page and dispatcher, and the
// dispatcher's interval finds the work anyway.
func (s *Store) notify(ctx context.Context, notes []notification) {
	if len(notes) == 0 {
		return
	}
	channels := make([]string, len(notes))
	payloads := make([]string, len(notes))
	for i, n := range notes {
		channels[i], payloads[i] = n.channel, n.payload
	}
	_, _ = s.pool.Exec(context.WithoutCancel(ctx), `
		SELECT set_config('synchronous_commit', 'off', true), pg_notify(c, p)
		FROM unnest($1::text[], $2::text[]) AS n(c, p)`, channels, payloads)
}

// advisoryLock takes a transaction-scoped advisory lock on key, serialising
// transactions that would otherwise race on a row that does not exist yet.
func (t *Tx) advisoryLock(ctx context.Context, key string) error {
	if _, err := t.tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", key); err != nil {
		return fmt.Errorf("store: advisory lock: %w", err)
	}
	return nil
}

// AdvisoryLocks takes transaction-scoped advisory locks on keys, in the
// order given, in one statement (a function scan yields an array's
// elements in order, and each lock is taken as its row is produced).
func (t *Tx) AdvisoryLocks(ctx context.Context, keys ...string) error {
	if _, err := t.tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k", keys); err != nil {
		return fmt.Errorf("store: advisory locks: %w", err)
	}
	return nil
}
