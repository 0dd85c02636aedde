package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"countersign/store"
	"countersign/store/dbtest"
)

// TestFrozenTransactionReleasesItsLocks opens a pool as the console does,
// with a short idle-in-transaction timeout, and leaves a transaction that
// holds a row lock waiting for its client, as a console stopped by SIGSTOP
// mid-transaction does: PostgreSQL must end that session so another session
// can take the row, and the frozen transaction's commit must fail rather
// than apply late.
func TestFrozenTransactionReleasesItsLocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewBareURL(t)
	pool, err := store.Open(ctx, url, 30*time.Second, store.IdleInTransactionTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE rows (id int PRIMARY KEY, v int); INSERT INTO rows VALUES (1, 0)`); err != nil {
		t.Fatal(err)
	}
	frozen, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = frozen.Rollback(ctx) }()
	if _, err := frozen.Exec(ctx, `UPDATE rows SET v = 1 WHERE id = 1`); err != nil {
		t.Fatal(err)
	}

	// Another session takes the row as soon as PostgreSQL has ended the
	// frozen one; without the timeout it would wait for ever (bounded here
	// by the context, which fails the test).
	waitCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := pool.Exec(waitCtx, `UPDATE rows SET v = 2 WHERE id = 1`); err != nil {
		t.Fatalf("row still locked by the frozen transaction: %v", err)
	}
	if err := frozen.Commit(ctx); err == nil {
		t.Fatal("the frozen transaction committed after its session was ended")
	}
	var v int
	if err := pool.QueryRow(ctx, `SELECT v FROM rows WHERE id = 1`).Scan(&v); err != nil || v != 2 {
		t.Fatalf("row v = %d (%v), want 2: only the live session's write", v, err)
	}
}

// TestOpenSetsAnIdleInTransactionTimeoutByDefault: a pool opened without
// options still ends frozen transactions, and a URL's own setting wins.
func TestOpenSetsAnIdleInTransactionTimeoutByDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewBareURL(t)
	show := func(url string, opts ...store.Option) string {
		t.Helper()
		pool, err := store.Open(ctx, url, 30*time.Second, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		var v string
		if err := pool.QueryRow(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got, want := show(url), store.DefaultIdleInTransactionTimeout.String(); got != want {
		t.Errorf("default: %s, want %s", got, want)
	}
	if got := show(url, store.IdleInTransactionTimeout(2*time.Second)); got != "2s" {
		t.Errorf("with the option: %s, want 2s", got)
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	if got := show(url + sep + "idle_in_transaction_session_timeout=7000"); got != "7s" {
		t.Errorf("set in the URL: %s, want 7s", got)
	}
}
