package bench

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/shopadapter"
)

// The seeded rows' shape. Ten invocations share a task and its
// conversation; history spreads over the year before the seed.
const (
	perTask     = 10
	historyDays = 365
)

// bulkRows is the size of a load from which indexes are built after it
// rather than kept up during it (a variable so that a test can take that
// path with few rows).
var bulkRows = 100000

// seedActions are the shop's actions the seed spreads invocations over,
// in a fixed order (the rows depend on it); seedStages and seedMoney say,
// from each one's spec, the stage its policy starts at and whether it
// moves money.
var (
	seedActions = []string{shopadapter.ActionIssueRefund, shopadapter.ActionCancelSubscription, shopadapter.ActionReinstateSubscription,
		shopadapter.ActionChangeShippingAddress, shopadapter.ActionUpdateProductDesc, shopadapter.ActionResendReceipt}
	seedStages, seedMoney = shopSpecs(seedActions)
)

func shopSpecs(names []string) ([]int16, []bool) {
	specs := map[string]adapter.ActionSpec{}
	for _, a := range shopadapter.New(shopadapter.Config{}).Actions() {
		specs[a.Name] = a
	}
	stages, money := make([]int16, len(names)), make([]bool, len(names))
	for i, n := range names {
		stages[i], money[i] = int16(specs[n].DefaultStage), specs[n].AmountParam != ""
	}
	return stages, money
}

// seeder loads synthetic but consistent rows into the console's real
// tables (indexes and all) with COPY: assistants' tasks with their conversations,
// invocations and each invocation's invocation.proposed event (the event
// is what the metrics roll-ups fold in, as in production).
type seeder struct {
	pool        *pgxpool.Pool
	assistantID string
	now         time.Time
}

// history loads invocations [from, to) of settled history (completed,
// reversed, failed, not dispatched, rejected, expired), spread over the
// last year, prefix "h".
func (s *seeder) history(ctx context.Context, from, to int) error {
	return s.load(ctx, "h", from, to, func(g int) invRow {
		action := g % len(seedActions)
		created := s.now.Add(-time.Duration((g*7919)%(historyDays*86400)) * time.Second)
		state := "completed"
		switch r := (g * 17) % 100; {
		case r >= 86 && r < 89:
			state = "reversed"
		case r >= 89 && r < 93:
			state = "failed"
		case r >= 93 && r < 95:
			state = "not_dispatched"
		case r >= 95 && r < 98:
			state = "rejected"
		case r >= 98:
			state = "expired"
		}
		return invRow{action: action, state: state, created: created, taskState: "closed"}
	})
}

// pending loads n invocations awaiting an agent's approval, proposed in
// the last two hours with deadlines over the next day, prefix "p".
func (s *seeder) pending(ctx context.Context, n int) error {
	return s.load(ctx, "p", 0, n, func(g int) invRow {
		return invRow{action: g % 2, state: "awaiting_approval", taskState: "active",
			created:  s.now.Add(-time.Duration(g%7200) * time.Second),
			deadline: s.now.Add(time.Hour + time.Duration(g%86400)*time.Second)}
	})
}

type invRow struct {
	action    int
	state     string
	taskState string
	created   time.Time
	deadline  time.Time
}

func (s *seeder) load(ctx context.Context, prefix string, from, to int, row func(g int) invRow) error {
	if to <= from {
		return nil
	}
	// A bulk load locks its tables against the running console; should
	// PostgreSQL pick it as a deadlock's victim, it runs again.
	for attempt := 1; ; attempt++ {
		err := s.loadOnce(ctx, prefix, from, to, row)
		var pgErr *pgconn.PgError
		if attempt < 5 && errors.As(err, &pgErr) && pgErr.Code == "40P01" {
			continue
		}
		return err
	}
}

func (s *seeder) loadOnce(ctx context.Context, prefix string, from, to int, row func(g int) invRow) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it does nothing
	if to-from >= bulkRows {
		// Taken first, in one order, before anything else is held: the
		// indexes of two tables are dropped and built again below.
		if _, err := tx.Exec(ctx, "LOCK TABLE tasks, conversations, invocations, events IN ACCESS EXCLUSIVE MODE"); err != nil {
			return err
		}
	}
	// The rows are consistent by construction; like pg_restore, the load
	// skips the per-row foreign-key checks and triggers (a million
	// lookups of the task, and a NOTIFY per event) that would make it
	// minutes long. Only this transaction is affected, and the bench
	// connects as the cluster's superuser.
	if _, err := tx.Exec(ctx, "SET LOCAL session_replication_role = replica"); err != nil {
		return err
	}
	firstTask, lastTask := from/perTask, (to-1)/perTask
	taskID := func(t int) string { return fmt.Sprintf("tsk_bench%s%d", prefix, t) }
	convID := func(t int) string { return fmt.Sprintf("conv_bench%s%d", prefix, t) }
	copyRows := func(table string, cols []string, n int, fn func(i int) []any) (rerr error) {
		if n >= bulkRows {
			// Building an index once over the loaded rows is far cheaper
			// than updating it row by row: drop the table's plain indexes
			// (not those of its constraints) and create them again, the
			// same, in this transaction.
			rows, err := tx.Query(ctx, `
				SELECT ix.indexname, ix.indexdef FROM pg_indexes ix
				WHERE ix.schemaname = current_schema() AND ix.tablename = $1
				  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = ix.indexname)`, table)
			if err != nil {
				return err
			}
			defs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Name, Def string }])
			if err != nil {
				return err
			}
			for _, d := range defs {
				if _, err := tx.Exec(ctx, "DROP INDEX "+pgx.Identifier{d.Name}.Sanitize()); err != nil {
					return err
				}
			}
			defer func() {
				for _, d := range defs {
					if _, err := tx.Exec(ctx, d.Def); err != nil && rerr == nil {
						rerr = fmt.Errorf("bench: recreate %s: %w", d.Name, err)
					}
				}
			}()
		}
		i := 0
		_, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromFunc(func() ([]any, error) {
			if i >= n {
				return nil, nil
			}
			r := fn(i)
			i++
			return r, nil
		}))
		if err != nil {
			return fmt.Errorf("bench: copy %s: %w", table, err)
		}
		return nil
	}
	// A task's row takes the first invocation's state and time.
	nTasks := lastTask - firstTask + 1
	if err := copyRows("conversations", []string{"id", "assistant_id", "created_at"}, nTasks, func(i int) []any {
		t := firstTask + i
		return []any{convID(t), s.assistantID, row(max(from, t*perTask)).created}
	}); err != nil {
		return err
	}
	allowed := seedActions
	if err := copyRows("tasks", []string{"id", "assistant_id", "customer_ref", "conversation_id", "systems", "allowed_actions",
		"write_budget", "writes_used", "inflight_limit", "rate_per_minute", "expires_at", "state", "created_at", "updated_at"}, nTasks,
		func(i int) []any {
			t := firstTask + i
			r := row(max(from, t*perTask))
			return []any{taskID(t), s.assistantID, fmt.Sprintf("customer%d@bench.test", t%5000), convID(t), []string{"shop"}, allowed,
				int32(100), int32(0), int32(5), int32(60), s.now.Add(30 * 24 * time.Hour), r.taskState, r.created, r.created}
		}); err != nil {
		return err
	}
	if err := copyRows("invocations", []string{"id", "task_id", "conversation_id", "system", "action", "target_kind", "target_id",
		"target_display", "state", "proposed_args", "args_hash", "approved_args_hash", "quote", "summary", "summary_disagrees",
		"idempotency_key", "amount_cents", "policy_stage", "policy_version", "route_reason", "deadline_at", "approved_at",
		"finished_at", "not_dispatched_reason", "decision_reason", "created_at", "updated_at"}, to-from, func(i int) []any {
		g := from + i
		r := row(g)
		t := g / perTask
		action := seedActions[r.action]
		hash := md5.Sum(fmt.Appendf(nil, "%s%d", prefix, g))
		amount := any(nil)
		if seedMoney[r.action] {
			amount = int64(500 + (g%40)*250)
		}
		var deadline, approved, finished any
		var approvedHash any
		var notDispatched, decision any
		person := seedStages[r.action] != 5
		if !r.deadline.IsZero() {
			deadline = r.deadline
		} else if person {
			deadline = r.created.Add(24 * time.Hour)
		}
		switch r.state {
		case "completed", "reversed", "failed", "not_dispatched":
			wait := time.Duration(0)
			if person {
				wait = time.Duration((g*131)%20000) * time.Second
			}
			approved, approvedHash = r.created.Add(wait), hash[:]
		}
		if r.state != "awaiting_approval" {
			finished = r.created.Add(time.Hour)
		}
		switch r.state {
		case "not_dispatched":
			notDispatched = []string{"task paused", "budget spent", "target changed"}[g%3]
		case "rejected":
			decision = []string{"wrong amount", "customer asked for something else", "duplicate"}[g%3]
		}
		quote := fmt.Sprintf(`{"title":"Refund $%d.00 on order #%d","lines":[{"label":"Refund","to":"$%d.00","emphasis":true}],`+
			`"consequences":["The money goes back to the card used."],"amount_cents":%d,"currency":"usd","confirm_label":"Refund","decline_label":"Keep"}`,
			5+g%40, g, 5+g%40, 500+(g%40)*250)
		return []any{fmt.Sprintf("inv_bench%s%d", prefix, g), taskID(t), convID(t), "shop", action, "order", fmt.Sprintf("ord_%s%d", prefix, g),
			fmt.Sprintf("Order #%s%d", prefix, g), r.state,
			fmt.Sprintf(`{"order_id":"ord_%s%d","amount_cents":%d,"reason_code":"damaged"}`, prefix, g, 500+(g%40)*250),
			hash[:], approvedHash, quote, "Refund the damaged order.", g%37 == 0, fmt.Sprintf("key-bench%s%d", prefix, g), amount,
			seedStages[r.action], int32(1), "", deadline, approved, finished, notDispatched, decision, r.created, r.created.Add(time.Hour)}
	}); err != nil {
		return err
	}
	if err := copyRows("events", []string{"at", "actor_kind", "actor_id", "action", "task_id", "invocation_id", "data"}, to-from,
		func(i int) []any {
			g := from + i
			return []any{row(g).created, "assistant", s.assistantID, string(controlplane.EventInvocationProposed), taskID(g / perTask),
				fmt.Sprintf("inv_bench%s%d", prefix, g), "{}"}
		}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
