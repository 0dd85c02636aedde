package store

import (
	"context"
	"fmt"
	"time"
)

// HistorySpec says how much synthetic history GenerateHistory loads.
type HistorySpec struct {
	// Prefix keeps the ids of one load apart from another's.
	Prefix        string
	Invocations   int
	Conversations int
	// Days spreads the history over the days before End.
	Days int
	End  time.Time
	// AssistantID owns the tasks and conversations; it is created if missing.
	AssistantID string
	// Finished leaves no invocation open or unverified, so that nothing of
	// the history waits in an agent's queue (for demos).
	Finished bool
	// System and Actions are what the invocations act on: they are spread
	// over the actions in turn, in this order.
	System  string
	Actions []HistoryAction
}

// HistoryAction is one action of the history: its name, the policy stage
// its invocations ran at (5 runs without a person) and whether it moves
// money (its invocations then carry an amount).
type HistoryAction struct {
	Name  string
	Stage int16
	Money bool
}

// GenerateHistory bulk-loads realistic, deterministic history for the
// metrics benchmark and demos: tasks, invocations over the given actions
// in every final state (each with its invocation.proposed event),
// policy refusals, and conversations with their conversation events. As
// in a console that people look after, only the last two days hold
// invocations still open or unverified; older ones were settled. It
// uses set-based SQL (generate_series), so a million rows load in one
// statement each. A second load with the same prefix does nothing.
func (s *Store) GenerateHistory(ctx context.Context, h HistorySpec) error {
	if h.Days < 1 || h.Prefix == "" || h.AssistantID == "" || h.System == "" || len(h.Actions) == 0 {
		return fmt.Errorf("store.GenerateHistory: a prefix, an assistant, a system, its actions and at least one day are required")
	}
	names, money := []string{}, []string{}
	var stages []int16
	for _, a := range h.Actions {
		names, stages = append(names, a.Name), append(stages, a.Stage)
		if a.Money {
			money = append(money, a.Name)
		}
	}
	refused := names[0]
	if len(money) > 0 {
		refused = money[0]
	}
	var loaded bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tasks WHERE id = $1 || 't0')`, h.Prefix).Scan(&loaded); err != nil {
		return fmt.Errorf("store.GenerateHistory: %w", err)
	}
	if loaded {
		return nil
	}
	secs := int64(h.Days) * 86400
	unverified, open := "unverified", "awaiting_approval"
	if h.Finished {
		unverified, open = "failed", "expired"
	}
	stmts := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO assistants (id, name, created_at) VALUES ($1, $1, $2) ON CONFLICT DO NOTHING`, []any{h.AssistantID, h.End}},
		{`INSERT INTO tasks (id, assistant_id, customer_ref, conversation_id, systems, allowed_actions, write_budget, writes_used,
			inflight_limit, rate_per_minute, expires_at, state, created_at, updated_at)
		SELECT $1 || 't' || g, $2, 'cust_' || (g % 5000), $1 || 'c' || g, ARRAY[$6::text], $7::text[],
			100, 0, 5, 60, $3::timestamptz, 'closed', $3::timestamptz - make_interval(secs => ((g * 7919) % $4)::float8), $3::timestamptz
		FROM generate_series(0::bigint, ($5::bigint - 1) / 10) g`, []any{h.Prefix, h.AssistantID, h.End, secs, h.Invocations, h.System, names}},
		{`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
			proposed_args, args_hash, approved_args_hash, quote, summary_disagrees, idempotency_key, amount_cents, policy_stage,
			policy_version, route_reason, deadline_at, approved_at, finished_at, not_dispatched_reason, decision_reason,
			created_at, updated_at)
		SELECT $1 || 'i' || g, $1 || 't' || (g / 10), $1 || 'c' || (g / 10), $7::text, x.action, 'object', 'obj_' || g, 'Object ' || g, x.state,
			'{}', decode(md5(g::text), 'hex'),
			CASE WHEN x.person AND x.approved THEN CASE WHEN g % 11 = 0 THEN decode(md5('edited' || g), 'hex') ELSE decode(md5(g::text), 'hex') END
				WHEN x.approved THEN decode(md5(g::text), 'hex') END,
			'{}', g % 37 = 0, $1 || 'k' || g, CASE WHEN x.action = ANY($10::text[]) THEN 500 + (g % 40) * 250 END,
			x.stage, 1, '', CASE WHEN x.person THEN x.created + interval '1 day' END,
			CASE WHEN x.approved THEN x.created + CASE WHEN x.person THEN make_interval(secs => ((g * 131) % 20000)::float8) ELSE interval '0' END END,
			CASE WHEN x.state IN ('completed', 'reversed', 'failed', 'unverified', 'not_dispatched', 'rejected', 'expired')
				THEN x.created + interval '1 hour' END,
			CASE WHEN x.state = 'not_dispatched' THEN (ARRAY['task paused', 'budget spent', 'target changed'])[(1 + g % 3)::int] END,
			CASE WHEN x.state = 'rejected' THEN (ARRAY['wrong amount', 'customer asked for something else', 'duplicate'])[(1 + g % 3)::int] END,
			x.created,
			CASE WHEN x.state = 'reversed' THEN x.created + CASE WHEN g % 3 = 0 THEN interval '9 days' ELSE interval '2 days' END
				ELSE x.created + interval '1 hour' END
		FROM generate_series(0::bigint, $2::bigint - 1) g
		CROSS JOIN LATERAL (SELECT
			($8::text[])[(1 + g % cardinality($8::text[]))::int] AS action,
			($9::smallint[])[(1 + g % cardinality($8::text[]))::int] AS stage,
			($9::smallint[])[(1 + g % cardinality($8::text[]))::int] <> 5 AS person,
			$3::timestamptz - make_interval(secs => ((g * 7919) % $4)::float8) AS created,
			CASE WHEN (g * 17) % 100 < 86 THEN 'completed' WHEN (g * 17) % 100 < 89 THEN 'reversed' WHEN (g * 17) % 100 < 92 THEN 'failed'
				WHEN (g * 17) % 100 < 93 THEN CASE WHEN (g * 7919) % $4 < 172800 THEN $5 ELSE 'failed' END WHEN (g * 17) % 100 < 95 THEN 'not_dispatched'
				WHEN (g * 17) % 100 < 98 THEN 'rejected' WHEN (g * 17) % 100 < 99 OR (g * 7919) % $4 >= 172800 THEN 'expired' ELSE $6 END AS state) s0
		CROSS JOIN LATERAL (SELECT s0.*, s0.state IN ('completed', 'reversed', 'failed', 'unverified', 'not_dispatched') AS approved) x`,
			[]any{h.Prefix, h.Invocations, h.End, secs, unverified, open, h.System, names, stages, money}},
		{`INSERT INTO events (at, actor_kind, actor_id, action, task_id, invocation_id, data)
		SELECT i.created_at, 'assistant', $2, 'invocation.proposed', i.task_id, i.id, '{}'
		FROM invocations i WHERE i.id LIKE $1 || 'i%'`, []any{h.Prefix, h.AssistantID}},
		{`INSERT INTO events (at, actor_kind, actor_id, action, task_id, data)
		SELECT $3::timestamptz - make_interval(secs => ((g * 104729) % $4)::float8), 'assistant', $2,
			CASE WHEN g % 4 = 0 THEN 'proposal.blocked_after_refusal' ELSE 'proposal.refused' END, $1 || 't' || g,
			jsonb_build_object('system', $6::text, 'action', $7::text)
		FROM generate_series(0::bigint, $5::bigint / 200) g`, []any{h.Prefix, h.AssistantID, h.End, secs, h.Invocations, h.System, refused}},
		{`INSERT INTO conversation_events (conversation_id, assistant_id, intent, mode, at)
		SELECT $1 || 'v' || g, $2, x.intent, m.mode, x.start + m.after
		FROM generate_series(0::bigint, $3::bigint - 1) g
		CROSS JOIN LATERAL (SELECT
			(ARRAY['informational', 'diagnostic', 'navigational', 'transactional_low', 'transactional_high', 'ambiguous', 'out_of_scope'])[(1 + g % 7)::int] AS intent,
			$4::timestamptz - make_interval(secs => ((g * 7907) % $5)::float8) AS start) x
		CROSS JOIN LATERAL (VALUES
			(CASE WHEN g % 7 IN (3, 4) THEN 'proposed' WHEN g % 9 = 0 THEN 'clarified' ELSE 'read_and_answered' END, interval '0'),
			(CASE WHEN g % 5 = 0 OR g % 7 = 6 THEN 'handed_off' WHEN g % 7 IN (3, 4) THEN 'executed' ELSE 'resolved' END,
				make_interval(secs => (30 + (g * 37) % 7200)::float8))) m(mode, after)`,
			[]any{h.Prefix, h.AssistantID, h.Conversations, h.End, secs}},
	}
	for _, st := range stmts {
		if _, err := s.pool.Exec(ctx, st.sql, st.args...); err != nil {
			return fmt.Errorf("store.GenerateHistory: %w", err)
		}
	}
	return nil
}
