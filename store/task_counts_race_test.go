package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/store/dbtest"
)

// TestConcurrentChangesOfOneTaskCountBoth: two transactions each decide
// one of a task's two pending requests. The first holds the task's row
// (its recount wrote the task's counts) while the second's recount waits
// for it; the second's count is taken after the first commits, so the
// task ends with neither request counted. (When each counted in its own
// statement's snapshot, the second stored "1 awaiting approval" over the
// first's.)
func TestConcurrentChangesOfOneTaskCountBoth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO tasks (id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit, rate_per_minute,
			expires_at, state, created_at, updated_at)
		 VALUES ('tsk_race', 'c@example.test', 'conv-race', '{issue_refund}', 10, 2, 60, $1::timestamptz + interval '1 day',
			'active', $1, $1)`,
		`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, quote, idempotency_key, amount_cents, policy_stage, policy_version, deadline_at,
			created_at, updated_at)
		 SELECT 'inv_' || g, 'tsk_race', 'conv-race', 'shop', 'issue_refund', 'order', 'ord_' || g, 'Order ' || g,
			'awaiting_approval', '{}', '\x00', '{}', 'key-' || g, 100, 3, 1, $1::timestamptz + interval '1 hour', $1, $1
		 FROM unnest(ARRAY['a', 'b']) g`,
	} {
		if _, err := pool.Exec(ctx, q, now); err != nil {
			t.Fatal(err)
		}
	}
	counted := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT awaiting_approval_count FROM tasks WHERE id = 'tsk_race'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := counted(); n != 2 {
		t.Fatalf("after two proposals the task counts %d awaiting approval, want 2", n)
	}

	connect := func() *pgx.Conn {
		c, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		return c
	}
	first, second := connect(), connect()
	decide := `UPDATE invocations SET state = 'rejected', updated_at = $2 WHERE id = $1`
	tx1, err := first.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx1.Rollback(ctx) }()
	if _, err := tx1.Exec(ctx, decide, "inv_a", now); err != nil {
		t.Fatal(err)
	}
	var secondPID uint32
	if err := second.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&secondPID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		tx2, err := second.Begin(ctx)
		if err == nil {
			if _, err = tx2.Exec(ctx, decide, "inv_b", now); err == nil {
				err = tx2.Commit(ctx)
			}
		}
		done <- err
	}()
	// The second waits for the first's lock on the task before the first
	// commits: looked for in pg_stat_activity, not slept for.
	for waiting := false; !waiting; {
		if err := pool.QueryRow(ctx, `SELECT coalesce(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1`,
			secondPID).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("the second transaction ended (%v) before the first committed: it never waited for the task", err)
		default:
		}
	}
	if err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := counted(); n != 0 {
		t.Errorf("both requests decided, the task counts %d awaiting approval, want 0", n)
	}
}
