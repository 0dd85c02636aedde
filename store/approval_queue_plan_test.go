package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/store"
	"countersign/store/dbtest"
)

// TestQueueReadsStayFlatInTheirCachedPlans: a connection runs a statement
// with the plan it caches after five executions (the generic plan, made
// without the arguments). Over 5,000 pending and 20,000 settled
// invocations, every read of the queue and its counts — the first page, a
// deep page, a filtered page, the capped counts and the home page's
// waiting work — reads at most about a page (or the counts' cap) of
// invocations in that plan: none reads every pending row or scans the
// table. (A filtered read is planned for its values: that plan is the one
// checked.)
func TestQueueReadsStayFlatInTheirCachedPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := dbtest.New(t)
	rec := &recorder{}
	cfg := base.Config().Copy()
	cfg.ConnConfig.Tracer = rec
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(traced.Close)
	st := store.New(traced)
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO tasks (id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit, rate_per_minute,
			expires_at, state, created_at, updated_at)
		 SELECT 'tsk_' || g, 'customer' || g || '@example.test', 'conv-' || g, '{issue_refund}', 10, 2, 60,
			$1::timestamptz + interval '30 days', 'active', $1, $1
		 FROM generate_series(0, 999) g`,
		// Settled first and pending after, as history grows: a scan of the
		// heap meets every settled row before the first pending one.
		`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, quote, idempotency_key, amount_cents, policy_stage, policy_version, deadline_at,
			finished_at, created_at, updated_at)
		 SELECT 'inv_h' || g, 'tsk_' || (g % 1000), 'conv-' || (g % 1000), 'shop', 'issue_refund', 'order', 'ord_' || (g % 30000),
			'Order #' || g, (ARRAY['completed', 'rejected', 'expired'])[1 + g % 3], '{}'::jsonb, '\x00',
			jsonb_build_object('title', 'Refund on order #' || g, 'currency', 'usd'), 'key-h' || g, 100 + g % 50000, 3, 1,
			$1::timestamptz - g * interval '1 minute', $1::timestamptz - g * interval '1 minute',
			$1::timestamptz - g * interval '1 minute' - interval '1 hour', $1::timestamptz - g * interval '1 minute'
		 FROM generate_series(1, 20000) g`,
		`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, quote, idempotency_key, amount_cents, policy_stage, policy_version, deadline_at,
			created_at, updated_at)
		 SELECT 'inv_p' || g, 'tsk_' || (g % 1000), 'conv-' || (g % 1000), 'shop',
			CASE WHEN g % 3 = 0 THEN 'cancel_subscription' ELSE 'issue_refund' END, 'order', 'ord_' || (g * 3 % 30000),
			'Order #' || g, 'awaiting_approval', '{}'::jsonb, '\x00', jsonb_build_object('title', 'Refund on order #' || g, 'currency', 'usd'),
			'key-p' || g, 100 + g % 50000, 3, 1, $1::timestamptz + (g % 86400) * interval '1 second',
			$1::timestamptz - (g % 7200) * interval '1 second', $1::timestamptz - (g % 7200) * interval '1 second'
		 FROM generate_series(1, 5000) g`,
	} {
		if _, err := base.Exec(ctx, q, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := base.Exec(ctx, `VACUUM ANALYZE invocations, tasks`); err != nil {
		t.Fatal(err)
	}
	// Amounts run from $1.01 to $51.00: this range keeps two in five.
	min, max := int64(1000), int64(3000)
	deep := store.QueueCursor{DeadlineAt: now.Add(20 * time.Hour), ID: "inv_p5"}
	for _, r := range []struct {
		name string
		run  func() error
	}{
		{"first page", func() error { _, err := st.ApprovalQueue(ctx, store.QueueFilter{Now: now, Limit: 26}); return err }},
		{"deep page", func() error {
			_, err := st.ApprovalQueue(ctx, store.QueueFilter{Now: now, Limit: 26, After: &deep})
			return err
		}},
		{"filtered page", func() error {
			_, err := st.ApprovalQueue(ctx, store.QueueFilter{Now: now, Limit: 26, Action: "issue_refund", MinCents: &min, MaxCents: &max})
			return err
		}},
		{"count", func() error { _, err := st.CountQueue(ctx, store.QueueFilter{Now: now}); return err }},
		{"pending counts", func() error { _, _, err := st.CountPending(ctx); return err }},
		{"waiting work", func() error { _, err := st.WaitingWork(ctx, 10); return err }},
	} {
		rec.take()
		if err := r.run(); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		for _, q := range rec.take() {
			if read := genericPlanReads(t, base, q); read > store.PendingCountCap+100 {
				t.Errorf("%s: its cached plan reads %d invocations (at most a page or the cap expected):\n%s", r.name, read, q.SQL)
			}
		}
	}
}

// genericPlanReads runs a recorded statement in its generic plan (EXPLAIN
// ANALYZE of a prepared statement under force_generic_plan), or in the
// plan made for its arguments when it runs unprepared (pgx's exec mode),
// and returns how many rows of invocations its scans read, kept or
// filtered out.
func genericPlanReads(t *testing.T, pool *pgxpool.Pool, q pgx.TraceQueryStartData) int {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if len(q.Args) > 0 && q.Args[0] == pgx.QueryExecModeExec {
		var out string
		if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+q.SQL, q.Args...).Scan(&out); err != nil {
			t.Fatalf("explain: %v\n%s", err, q.SQL)
		}
		return planReads(t, out)
	}
	args := make([]string, len(q.Args))
	for i, a := range q.Args {
		args[i] = sqlLiteral(t, a)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `PREPARE generic_plan AS `+q.SQL); err != nil {
		t.Fatalf("prepare: %v\n%s", err, q.SQL)
	}
	var out string
	execute := `EXECUTE generic_plan`
	if len(args) > 0 {
		execute += `(` + strings.Join(args, ", ") + `)`
	}
	if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+execute).Scan(&out); err != nil {
		t.Fatalf("explain: %v\n%s", err, q.SQL)
	}
	if _, err := tx.Exec(ctx, `DEALLOCATE generic_plan`); err != nil {
		t.Fatal(err)
	}
	return planReads(t, out)
}

func planReads(t *testing.T, explained string) int {
	t.Helper()
	var plan []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(explained), &plan); err != nil || len(plan) != 1 {
		t.Fatalf("plan %s: %v", explained, err)
	}
	return plan[0].Plan.invocationsRead()
}

type planNode struct {
	Relation string     `json:"Relation Name"`
	Rows     float64    `json:"Actual Rows"`
	Loops    float64    `json:"Actual Loops"`
	Removed  float64    `json:"Rows Removed by Filter"`
	Plans    []planNode `json:"Plans"`
}

func (n planNode) invocationsRead() int {
	read := 0
	if n.Relation == "invocations" {
		read = int((n.Rows + n.Removed) * n.Loops)
	}
	for _, c := range n.Plans {
		read += c.invocationsRead()
	}
	return read
}

// sqlLiteral writes a statement's argument as an SQL literal, for the
// argument types the queue's reads pass.
func sqlLiteral(t *testing.T, a any) string {
	t.Helper()
	switch v := a.(type) {
	case nil:
		return "NULL"
	case *time.Time:
		if v == nil {
			return "NULL"
		}
		return sqlLiteral(t, *v)
	case *int64:
		if v == nil {
			return "NULL"
		}
		return sqlLiteral(t, *v)
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case time.Time:
		return "'" + v.UTC().Format(time.RFC3339Nano) + "'"
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	}
	t.Fatalf("no literal for %T", a)
	return fmt.Sprint(a)
}
