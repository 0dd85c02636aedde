package console_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/accounts"
	"countersign/store"
	"countersign/store/dbtest"
)

// BenchmarkTaskListPages measures the p95 of the task list and the
// hand-offs (real HTTP, real PostgreSQL) over 20,000 tasks with 40,000
// requests in mixed states and 5,000 hand-offs in 1,000 identical groups,
// then over ten times as many, and prints each shape's p95 at both sizes
// and their ratio: the first page of all tasks, the default page (what
// needs a person), a page deep in the list (keyset cursor),
// a filtered page, and the hand-offs. Run it once:
//
//	go test ./web/ -run '^$' -bench TaskListPages -benchtime 1x
func BenchmarkTaskListPages(b *testing.B) {
	small := taskListP95s(b, 1)
	large := taskListP95s(b, 10)
	for i, sh := range small {
		b.Logf("%-24s p95 %8.2f ms at %d tasks, %8.2f ms at %d tasks: %.2f×", sh.name, ms(sh.p95), 20_000, ms(large[i].p95), 200_000,
			float64(large[i].p95)/float64(max(sh.p95, 1)))
	}
}

type shapeP95 struct {
	name string
	p95  time.Duration
}

// taskListP95s seeds scale × 20,000 tasks in a database of their own and
// returns the p95 of each shape over 50 requests.
func taskListP95s(b *testing.B, scale int) []shapeP95 {
	ctx := context.Background()
	// The stack's clock stands still at 2026-04-01 09:00 UTC: now.
	stack := webtest.Assemble(b, store.New(dbtest.New(b)))
	st, srv, now := stack.Store, stack.Server, stack.Now()
	u, err := stack.Accounts.Create(ctx, accounts.NewUser{Email: "bench-agent@example.test", Name: "Bench Agent", Role: accounts.Agent, Password: "a long enough password"})
	if err != nil {
		b.Fatal(err)
	}
	hc := benchSignIn(b, srv.URL, u.Email, "a long enough password")
	for _, q := range []string{
		`INSERT INTO tasks (id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit, rate_per_minute,
			expires_at, state, created_at, updated_at)
		SELECT 'tsk_b' || g, 'customer' || (g % (5000 * $2::int)) || '@example.test', 'conv-' || g, '{issue_refund}', 10, 2, 60,
			$1::timestamptz + interval '30 days', CASE WHEN g % 7 = 0 THEN 'closed' WHEN g % 97 = 0 THEN 'paused' ELSE 'active' END,
			$1, $1::timestamptz - (g % 9000) * interval '1 second'
		FROM generate_series(1, 20000 * $2::int) g`,
		`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, quote, idempotency_key, amount_cents, policy_stage, policy_version, deadline_at,
			created_at, updated_at)
		SELECT 'inv_b' || g, 'tsk_b' || (1 + g % (20000 * $2::int)), 'conv-' || g, 'shop', CASE WHEN g % 3 = 0 THEN 'cancel_subscription' ELSE 'issue_refund' END,
			'order', 'ord_' || g, 'Order #' || g,
			CASE WHEN g % 501 = 0 THEN 'unverified' WHEN g % 13 = 0 THEN 'awaiting_approval' ELSE 'completed' END,
			jsonb_build_object('order_id', 'ord_' || g, 'amount_cents', 100 + g % 50000, 'reason_code', 'damaged'), '\x00',
			jsonb_build_object('title', 'Refund on order #' || g), 'key-b' || g, 100 + g % 50000, 3, 1,
			$1::timestamptz + interval '1 day', $1, $1
		FROM generate_series(1, 40000 * $2::int) g`,
		`INSERT INTO assistants (id, name, created_at) VALUES ('asst_b', 'Bench', $1)`,
		`INSERT INTO conversation_events (conversation_id, assistant_id, task_id, intent, mode, at, data)
		SELECT 'conv-' || (g % (1000 * $2::int)), 'asst_b', 'tsk_b' || (1 + g % (1000 * $2::int)), 'ambiguous', 'handed_off',
			$1::timestamptz - (g % 5000) * interval '1 second', jsonb_build_object('summary', 'Two orders match, ' || (g % (1000 * $2::int)))
		FROM generate_series(1, 5000 * $2::int) g`,
		// As autovacuum leaves them after a load: the first reads after a
		// bulk insert set hint bits and race autovacuum, which is not the
		// list's cost.
		`VACUUM ANALYZE tasks`,
		`VACUUM ANALYZE invocations`,
		`VACUUM ANALYZE conversation_events`,
		`VACUUM ANALYZE task_actions`,
		`VACUUM ANALYZE task_list_cells`,
	} {
		var args []any
		if strings.Contains(q, "$2") {
			args = []any{now, scale}
		} else if strings.Contains(q, "$1") {
			args = []any{now}
		}
		if _, err := st.Pool().Exec(ctx, q, args...); err != nil {
			b.Fatal(err)
		}
	}
	shapes := []struct{ name, path string }{
		{"tasks first page", "/tasks?need=all"},
		{"tasks default (needs a person)", "/tasks"},
		{"tasks deep page", ""},
		{"tasks needing a person", "/tasks?need=person&action=issue_refund"},
		{"hand-offs", "/handoffs"},
	}
	deep := benchFollow(b, hc, srv.URL+"/tasks?need=all", 20)
	var out []shapeP95
	for _, sh := range shapes {
		path := sh.path
		if path == "" {
			path = deep
		}
		var samples []time.Duration
		for range 50 {
			start := time.Now()
			res, err := hc.Get(srv.URL + path)
			if err != nil {
				b.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Fatalf("%s: %d", path, res.StatusCode)
			}
			samples = append(samples, time.Since(start))
		}
		slices.Sort(samples)
		out = append(out, shapeP95{sh.name, samples[len(samples)*95/100]})
	}
	return out
}
