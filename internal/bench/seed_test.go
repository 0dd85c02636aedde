package bench

import (
	"context"
	"slices"
	"testing"
	"time"

	"countersign/store"
	"countersign/store/dbtest"
)

// TestSeedKeepsIndexesAndRows seeds history and pending work in bulk (the
// path that drops and rebuilds indexes) into a migrated database: every
// index is back with its definition, the rows are there with their
// events, and the metrics refresh folds them in.
func TestSeedKeepsIndexesAndRows(t *testing.T) {
	ctx := context.Background()
	pool := dbtest.New(t)
	indexes := func() []string {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var d string
			if err := rows.Scan(&d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
		return out
	}
	before := indexes()
	if _, err := pool.Exec(ctx, `INSERT INTO assistants (id, name, created_at) VALUES ('asst_seed', 'seed', now())`); err != nil {
		t.Fatal(err)
	}
	old := bulkRows
	bulkRows = 100
	defer func() { bulkRows = old }()
	sd := &seeder{pool: pool, assistantID: "asst_seed", now: time.Now()}
	if err := sd.history(ctx, 0, 500); err != nil {
		t.Fatal(err)
	}
	if err := sd.history(ctx, 500, 1000); err != nil {
		t.Fatal(err)
	}
	if err := sd.pending(ctx, 300); err != nil {
		t.Fatal(err)
	}
	if after := indexes(); !slices.Equal(before, after) {
		t.Fatalf("indexes changed by the seed:\nbefore %q\nafter  %q", before, after)
	}
	var inv, pending, events, tasks, orphans int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM invocations), (SELECT count(*) FROM invocations WHERE state = 'awaiting_approval'),
		(SELECT count(*) FROM events WHERE action = 'invocation.proposed'), (SELECT count(*) FROM tasks),
		(SELECT count(*) FROM invocations i WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = i.task_id)
			OR NOT EXISTS (SELECT 1 FROM conversations c WHERE c.id = i.conversation_id))`).Scan(&inv, &pending, &events, &tasks, &orphans); err != nil {
		t.Fatal(err)
	}
	if inv != 1300 || pending != 300 || events != 1300 || tasks != 130 || orphans != 0 {
		t.Fatalf("invocations %d, pending %d, proposed events %d, tasks %d, orphans %d", inv, pending, events, tasks, orphans)
	}
	rep, err := store.New(pool).RefreshMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.InvocationDays < 90 { // 1,000 rows spread 7,919 s apart: three months
		t.Fatalf("the refresh folded %d invocation days; three months of history were seeded", rep.InvocationDays)
	}
}
