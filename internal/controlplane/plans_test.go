package controlplane_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/internal/controlplane"
	"countersign/store/dbtest"
)

// TestWritePathPlansMadeWhileEmptyStayBounded: a connection caches the
// plan of each statement it prepares, and PostgreSQL keeps a generic plan
// (made without the arguments) for as long as the connection lives, until
// the tables are analysed again. Plans made while the tables are nearly
// empty, as on a new installation, see every index cost the same and may
// pick one that reads a whole system's history later. Every read and
// update of an automatic write (captured as the control plane runs one)
// is planned generically on a nearly empty database, then run in that
// plan over 20,000 ledger calls of the same system and 5,000 older
// requests of the same task, in a transaction rolled back: none reads more
// than 100 pages. (Before migration 00023, the ledger's lookups read every
// call of the system through the target index, and the task's proposal
// and permit counts read its whole history; the deadline sweep scanned
// every request.) A statement sent in exec mode is planned for its
// arguments at each run and is not checked.
func TestWritePathPlansMadeWhileEmptyStayBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := dbtest.New(t)
	// No analyse while the test runs: a new installation's first minutes.
	for _, table := range []string{"invocations", "adapter_requests", "tasks", "events", "target_blocks"} {
		if _, err := base.Exec(ctx, `ALTER TABLE `+table+` SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
	}
	b, rec, _ := tracedSetupOn(t, base)
	b.setStage("update_product_description", controlplane.StageAutonomous)
	task := b.task([]string{"update_product_description"}, 1000, 2, 1000)
	product := b.product()
	rec.mu.Lock()
	rec.capture = true
	rec.mu.Unlock()
	b.chain(rec, func(cp *controlplane.Service) controlplane.Invocation {
		raw := fmt.Sprintf(`{"product_id":%q,"description":"Planned"}`, product.ID)
		inv, err := cp.Propose(b.ctx, controlplane.Proposal{TaskID: task.ID, Action: "update_product_description", Args: []byte(raw), Actor: b.assistant})
		if err != nil {
			t.Fatal(err)
		}
		return inv
	})
	rec.mu.Lock()
	rec.capture = false
	captured := rec.captured
	rec.mu.Unlock()

	cfg := base.Config().ConnConfig.Copy()
	cfg.Tracer = nil
	cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	type planned struct {
		name, sql string
		args      []any
	}
	var stmts []planned
	seen := map[string]bool{}
	for _, c := range captured {
		sql := strings.TrimSpace(c.sql)
		lower := strings.ToLower(sql)
		if seen[sql] || len(c.args) == 0 || !(strings.HasPrefix(lower, "select") || strings.HasPrefix(lower, "update") ||
			strings.HasPrefix(lower, "with")) || strings.Contains(lower, "pg_notify") || strings.Contains(lower, "advisory") {
			continue
		}
		if mode, ok := c.args[0].(pgx.QueryExecMode); ok && (mode == pgx.QueryExecModeExec || mode == pgx.QueryExecModeSimpleProtocol) {
			continue // planned for its arguments at each run, never cached
		}
		seen[sql] = true
		args := make([]any, len(c.args))
		for i, a := range c.args {
			switch v := a.(type) {
			case json.RawMessage:
				a = nil
				if v != nil {
					a = string(v) // a jsonb parameter, not bytea, as a literal
				}
			case []byte:
				if json.Valid(v) { // a document (a hash is not one)
					a = string(v)
				}
			}
			args[i] = a
		}
		stmts = append(stmts, planned{name: fmt.Sprintf("p%d", len(stmts)), sql: sql, args: args})
	}
	// explain runs one in its cached generic plan, rolled back, and
	// returns the pages it read.
	explain := func(p planned) (int, string, error) {
		marks := make([]string, len(p.args))
		for i := range marks {
			marks[i] = fmt.Sprintf("$%d", i+1)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = tx.Rollback(ctx) }()
		var out string
		if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE `+p.name+`(`+strings.Join(marks, ", ")+`)`,
			append([]any{pgx.QueryExecModeSimpleProtocol}, p.args...)...).Scan(&out); err != nil {
			return 0, "", err
		}
		var plans []struct {
			Plan map[string]any `json:"Plan"`
		}
		if err := json.Unmarshal([]byte(out), &plans); err != nil {
			return 0, "", fmt.Errorf("explain: %w", err)
		}
		if len(plans) != 1 {
			return 0, "", fmt.Errorf("explain: %d plans, want 1", len(plans))
		}
		num := func(k string) int { f, _ := plans[0].Plan[k].(float64); return int(f) }
		return num("Shared Hit Blocks") + num("Shared Read Blocks"), out, nil
	}
	var ready []planned
	for _, p := range stmts {
		if _, err := conn.Exec(ctx, `PREPARE `+p.name+` AS `+p.sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("prepare %s: %v", p.sql, err)
		}
		if _, _, err := explain(p); err != nil { // caches its generic plan now
			t.Logf("not measured (%v): %.80s", err, p.sql)
			continue
		}
		ready = append(ready, p)
	}

	old := b.clock.Now().Add(-time.Hour)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO adapter_requests (system, idempotency_key, action, target_id, args_hash, state, created_at)
		 SELECT 'shop', 'seed-' || g, 'update_product_description', 'prod_seed' || (g % 500), '\x00', 'applied', $1
		 FROM generate_series(1, 20000) g`, []any{old}},
		{`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, quote, idempotency_key, policy_stage, policy_version, permit_at, finished_at,
			created_at, updated_at)
		 SELECT 'inv_seed' || g, $2, 'conv-seed', 'shop', 'update_product_description', 'product', 'prod_seed' || (g % 500),
			'Seed', 'completed', '{}', '\x00', '{}', 'seed-key-' || g, 5, 1, $1, $1, $1, $1
		 FROM generate_series(1, 5000) g`, []any{old, task.ID}},
	} {
		if _, err := base.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}

	var ledger, byTask int
	for _, p := range ready {
		pages, plan, err := explain(p)
		if err != nil {
			t.Errorf("%.100s: %v", p.sql, err)
			continue
		}
		lower := strings.ToLower(p.sql)
		if strings.Contains(lower, "adapter_requests") {
			ledger++
		}
		if strings.Contains(lower, "from invocations where task_id") {
			byTask++
		}
		if pages > 100 {
			t.Errorf("%d pages in its plan made while empty, want at most 100: %s\n%s", pages, p.sql, plan)
		}
	}
	t.Logf("%d statements measured of %d captured", len(ready), len(captured))
	if ledger < 1 || byTask < 2 {
		t.Fatalf("measured %d ledger statements and %d counts by task, want the ledger's lookup and both counts", ledger, byTask)
	}
}
