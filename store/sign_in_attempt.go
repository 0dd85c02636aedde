package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// SignInScope names one of the sign-in throttle's counters.
type SignInScope string

const (
	// ScopeAccountSource counts one e-mail from one address.
	ScopeAccountSource SignInScope = "account_source"
	// ScopeSource counts one address, whatever the e-mail.
	ScopeSource SignInScope = "source"
	// ScopeAccount counts one e-mail from every address.
	ScopeAccount SignInScope = "account"
)

// SignInLimits are the most attempts each counter may take in one window.
// Zero means no limit for that scope.
type SignInLimits struct {
	AccountSource, Source, Account int
	// KnownSourceFor exempts an address from the Account limit when the
	// account succeeded from it this recently; zero exempts none.
	KnownSourceFor time.Duration
}

func (l SignInLimits) of(scope SignInScope) int {
	switch scope {
	case ScopeAccountSource:
		return l.AccountSource
	case ScopeSource:
		return l.Source
	case ScopeAccount:
		return l.Account
	}
	return 0
}

// SignInCounter is one counter as the attempt found it (before counting
// the attempt itself).
type SignInCounter struct {
	Scope         SignInScope `db:"scope"`
	Attempts      int         `db:"attempts"`
	WindowStart   time.Time   `db:"window_start"`
	LastSuccessAt *time.Time  `db:"last_success_at"`
}

// SignInAttempt is what TakeSignInAttempt decided.
type SignInAttempt struct {
	// Taken is true when every counter had room and the attempt was
	// counted; false when at least one is full and nothing was counted.
	Taken bool
	// Full lists the counters that refused the attempt.
	Full []SignInCounter
}

// TakeSignInAttempt counts one sign-in attempt of account from source at
// time at, in windows that started after windowStart; a counter whose
// window started earlier begins a new window at at. The counter rows stay
// locked from the first statement to the commit, so concurrent attempts on
// the same counters queue and each sees the others' counts: at most the
// limit of them are ever taken.
func (s *Store) TakeSignInAttempt(ctx context.Context, account, source string, limits SignInLimits, at, windowStart time.Time) (SignInAttempt, error) {
	var res SignInAttempt
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The same row order in every transaction: no deadlocks.
		rows, _ := tx.Query(ctx, `
			INSERT INTO sign_in_attempts AS a (scope, account, source, window_start, attempts)
			VALUES ('account_source', $1, $2, $3, 0), ('source', '', $2, $3, 0), ('account', $1, '', $3, 0)
			ON CONFLICT (scope, account, source) DO UPDATE SET
				attempts     = CASE WHEN a.window_start <= $4 THEN 0 ELSE a.attempts END,
				window_start = CASE WHEN a.window_start <= $4 THEN $3 ELSE a.window_start END
			RETURNING scope, attempts, window_start, last_success_at`, account, source, at, windowStart)
		counters, err := pgx.CollectRows(rows, pgx.RowToStructByName[SignInCounter])
		if err != nil {
			return err
		}
		known := false
		for _, c := range counters {
			if c.Scope == ScopeAccountSource && c.LastSuccessAt != nil && limits.KnownSourceFor > 0 &&
				at.Sub(*c.LastSuccessAt) < limits.KnownSourceFor {
				known = true
			}
		}
		for _, c := range counters {
			if c.Scope == ScopeAccount && known {
				continue
			}
			if limit := limits.of(c.Scope); limit > 0 && c.Attempts >= limit {
				res.Full = append(res.Full, c)
			}
		}
		if len(res.Full) > 0 {
			return nil // commits only the window roll-over
		}
		res.Taken = true
		_, err = tx.Exec(ctx, `
			UPDATE sign_in_attempts SET attempts = attempts + 1
			WHERE (scope, account, source) IN (('account_source', $1, $2), ('source', '', $2), ('account', $1, ''))`,
			account, source)
		return err
	})
	if err != nil {
		return SignInAttempt{}, fmt.Errorf("store.TakeSignInAttempt: %w", err)
	}
	return res, nil
}

// ReturnSignInAttempt gives back an attempt that was taken but never
// checked (the server was too busy to check the password).
func (s *Store) ReturnSignInAttempt(ctx context.Context, account, source string) error {
	if _, err := s.pool.Exec(ctx, `
		UPDATE sign_in_attempts SET attempts = greatest(attempts - 1, 0)
		WHERE (scope, account, source) IN (('account_source', $1, $2), ('source', '', $2), ('account', $1, ''))`,
		account, source); err != nil {
		return fmt.Errorf("store.ReturnSignInAttempt: %w", err)
	}
	return nil
}

// SignInSucceeded records a right password for account from source at
// time at: the pair's failures are forgotten and the address becomes known
// to the account; the successful attempt no longer counts for the address
// or the account, whose other failures stay counted.
func (s *Store) SignInSucceeded(ctx context.Context, account, source string, at time.Time) error {
	if _, err := s.pool.Exec(ctx, `
		UPDATE sign_in_attempts SET
			attempts = CASE WHEN scope = 'account_source' THEN 0 ELSE greatest(attempts - 1, 0) END,
			last_success_at = CASE WHEN scope = 'account_source' THEN $3::timestamptz END
		WHERE (scope, account, source) IN (('account_source', $1, $2), ('source', '', $2), ('account', $1, ''))`,
		account, source, at); err != nil {
		return fmt.Errorf("store.SignInSucceeded: %w", err)
	}
	return nil
}

// PruneSignInAttempts drops counters whose window started before
// windowStart and that remember no success since knownSince; they no
// longer change any decision.
func (s *Store) PruneSignInAttempts(ctx context.Context, windowStart, knownSince time.Time) error {
	if _, err := s.pool.Exec(ctx, `
		DELETE FROM sign_in_attempts
		WHERE window_start <= $1 AND (last_success_at IS NULL OR last_success_at < $2)`, windowStart, knownSince); err != nil {
		return fmt.Errorf("store.PruneSignInAttempts: %w", err)
	}
	return nil
}
