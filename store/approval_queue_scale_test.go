package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/store"
	"countersign/store/dbtest"
)

// recorder keeps the SQL and arguments of every query a pool runs, so the
// benchmark can EXPLAIN exactly what the store sent.
type recorder struct {
	mu   sync.Mutex
	last []pgx.TraceQueryStartData
}

func (r *recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	r.last = append(r.last, d)
	r.mu.Unlock()
	return ctx
}

func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *recorder) take() []pgx.TraceQueryStartData {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.last
	r.last = nil
	return out
}

// BenchmarkApprovalQueueAtScale fills 100,000 pending approvals and
// 1,000,000 finished invocations (on overlapping orders, so the stale-quote
// lookup finds some), then times and EXPLAINs (ANALYZE) each query the
// queue and the home pages make: the first page, a deep keyset page, a
// filtered page, the capped counts, the later writes on the first page's
// objects and the waiting work. Run it once:
//
//	go test ./store/ -run '^$' -bench ApprovalQueueAtScale -benchtime 1x
func BenchmarkApprovalQueueAtScale(b *testing.B) {
	ctx := context.Background()
	base := dbtest.New(b)
	rec := &recorder{}
	cfg := base.Config().Copy()
	cfg.ConnConfig.Tracer = rec
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(traced.Close)
	st := store.New(traced)
	now := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

	start := time.Now()
	for _, q := range []string{
		`INSERT INTO tasks (id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit, rate_per_minute,
			expires_at, state, created_at, updated_at)
		 SELECT 'tsk_' || g, 'customer' || g || '@example.test', 'conv-' || g, '{issue_refund}', 10, 2, 60,
			$1::timestamptz + interval '30 days', 'active', $1, $1
		 FROM generate_series(0, 9999) g`,
		// 1,000,000 finished: completed, rejected or expired, over 30 days.
		`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, quote, idempotency_key, amount_cents, policy_stage, policy_version, deadline_at,
			finished_at, created_at, updated_at)
		 SELECT 'inv_h' || g, 'tsk_' || (g % 10000), 'conv-' || (g % 10000), 'shop', 'issue_refund', 'order', 'ord_' || (g % 300000),
			'Order #' || g, (ARRAY['completed', 'rejected', 'expired'])[1 + g % 3],
			'{}'::jsonb, '\x00', jsonb_build_object('title', 'Refund on order #' || g, 'currency', 'usd'),
			'key-h' || g, 100 + g % 50000, 3, 1, $1::timestamptz - (g % 2592000) * interval '1 second',
			$1::timestamptz - (g % 2592000) * interval '1 second', $1::timestamptz - (g % 2592000) * interval '1 second' - interval '1 hour',
			$1::timestamptz - (g % 2592000) * interval '1 second'
		 FROM generate_series(1, 1000000) g`,
		// 100,000 pending, quoted in the last two hours.
		`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, quote, idempotency_key, amount_cents, policy_stage, policy_version, deadline_at,
			created_at, updated_at)
		 SELECT 'inv_p' || g, 'tsk_' || (g % 10000), 'conv-' || (g % 10000), 'shop',
			CASE WHEN g % 3 = 0 THEN 'cancel_subscription' ELSE 'issue_refund' END, 'order', 'ord_' || (g * 3 % 300000),
			'Order #' || g, 'awaiting_approval', '{}'::jsonb, '\x00',
			jsonb_build_object('title', 'Refund on order #' || g, 'currency', 'usd'),
			'key-p' || g, 100 + g % 50000, 3, 1, $1::timestamptz + (g % 86400) * interval '1 second',
			$1::timestamptz - (g % 7200) * interval '1 second', $1::timestamptz - (g % 7200) * interval '1 second'
		 FROM generate_series(1, 100000) g`,
	} {
		if _, err := base.Exec(ctx, q, now); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := base.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("filled 100,000 pending and 1,000,000 finished invocations in %s\n", time.Since(start).Round(time.Second))

	min, max := int64(10000), int64(20000)
	var firstPage []store.QueueItem
	measure := func(name string, run func() error) {
		b.Helper()
		var samples []time.Duration
		for range 21 {
			rec.take()
			t0 := time.Now()
			if err := run(); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			samples = append(samples, time.Since(t0))
		}
		slices.Sort(samples)
		queries := rec.take()
		for _, q := range queries {
			plan, total := explain(b, base, q)
			// Printed, not logged: a benchmark's log is cut short.
			fmt.Printf("%-22s median %7.2f ms · EXPLAIN ANALYZE execution %s\n%s\n", name, ms(samples[len(samples)/2]), total, plan)
		}
	}
	measure("first page", func() (err error) {
		firstPage, err = st.ApprovalQueue(ctx, store.QueueFilter{Now: now, Limit: 26})
		return err
	})
	if len(firstPage) != 26 || firstPage[0].DeadlineAt.After(*firstPage[25].DeadlineAt) {
		b.Fatalf("first page: %d cards, not soonest first", len(firstPage))
	}
	deep := store.QueueCursor{DeadlineAt: now.Add(20 * time.Hour), ID: "inv_p5"}
	measure("deep page", func() error {
		_, err := st.ApprovalQueue(ctx, store.QueueFilter{Now: now, Limit: 26, After: &deep})
		return err
	})
	measure("filtered page", func() error {
		_, err := st.ApprovalQueue(ctx, store.QueueFilter{Now: now, Limit: 26, Action: "issue_refund", MinCents: &min, MaxCents: &max, OlderThan: 15 * time.Minute})
		return err
	})
	measure("count", func() error {
		n, err := st.CountQueue(ctx, store.QueueFilter{Now: now})
		if err == nil && n != store.PendingCountCap {
			b.Fatalf("count %d, want the cap", n)
		}
		return err
	})
	measure("filtered count", func() error {
		_, err := st.CountQueue(ctx, store.QueueFilter{Now: now, Action: "issue_refund", MinCents: &min, MaxCents: &max, OlderThan: 15 * time.Minute})
		return err
	})
	ids := make([]string, 0, 25)
	for _, it := range firstPage[:25] {
		ids = append(ids, it.ID)
	}
	measure("later writes, 25 cards", func() error {
		_, err := st.TargetChanges(ctx, ids)
		return err
	})
	measure("waiting work (home)", func() error {
		_, err := st.WaitingWork(ctx, 10)
		return err
	})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// explain runs EXPLAIN (ANALYZE, BUFFERS) on a recorded query and returns
// the plan and its execution time.
func explain(b *testing.B, pool *pgxpool.Pool, q pgx.TraceQueryStartData) (string, string) {
	b.Helper()
	rows, err := pool.Query(context.Background(), "EXPLAIN (ANALYZE, BUFFERS) "+q.SQL, q.Args...)
	if err != nil {
		b.Fatalf("explain: %v", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatalf("explain: %v", err)
	}
	total := ""
	var keep []string
	for _, l := range lines {
		if strings.HasPrefix(l, "Execution Time") {
			total = strings.TrimPrefix(l, "Execution Time: ")
		}
		if strings.Contains(l, "Scan") || strings.Contains(l, "Sort") || strings.Contains(l, "Limit") {
			keep = append(keep, "    "+strings.TrimSpace(l))
		}
	}
	return strings.Join(keep, "\n"), total
}
