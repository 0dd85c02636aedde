package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MetricsFilter narrows the roll-ups: days From (inclusive) to To
// (exclusive), and, when not empty, one system, action, intent or
// assistant. Intent narrows conversation rows only: invocations carry none.
type MetricsFilter struct {
	From, To  time.Time
	System    string
	Action    string
	Intent    string
	Assistant string
}

// InvocationDay is one row of metrics_invocation_daily.
type InvocationDay struct {
	Day            time.Time `db:"day"`
	System         string    `db:"system"`
	Action         string    `db:"action"`
	AssistantID    string    `db:"assistant_id"`
	Stage          int16     `db:"stage"`
	Proposed       int64     `db:"proposed"`
	Settled        int64     `db:"settled"`
	Completed      int64     `db:"completed"`
	Reversed7d     int64     `db:"reversed_7d"`
	PersonApproved int64     `db:"person_approved"`
	Unedited       int64     `db:"unedited"`
	Disagreed      int64     `db:"disagreed"`
	WaitHist       []int64   `db:"wait_hist"`
}

// InvocationDays reads the invocation roll-up rows the filter selects.
func (s *Store) InvocationDays(ctx context.Context, f MetricsFilter) ([]InvocationDay, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT day, system, action, assistant_id, stage, proposed, settled, completed, reversed_7d, person_approved,
			unedited, disagreed, wait_hist
		FROM metrics_invocation_daily
		WHERE day >= $1::date AND day < $2::date AND ($3 = '' OR system = $3) AND ($4 = '' OR action = $4)
			AND ($5 = '' OR assistant_id = $5)
		ORDER BY day, system, action`, f.From, f.To, f.System, f.Action, f.Assistant)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[InvocationDay])
	if err != nil {
		return nil, fmt.Errorf("store.InvocationDays: %w", err)
	}
	return out, nil
}

// ReasonCount is how many invocations ended for one reason; Kind is
// "not_dispatched" or the kind of decision that refused them.
type ReasonCount struct {
	Kind   string `db:"kind"`
	Reason string `db:"reason"`
	N      int64  `db:"n"`
}

// ReasonCounts sums not-dispatched and rejection reasons over the filter.
func (s *Store) ReasonCounts(ctx context.Context, f MetricsFilter) ([]ReasonCount, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT kind, reason, sum(n)::bigint AS n FROM metrics_reason_daily
		WHERE day >= $1::date AND day < $2::date AND ($3 = '' OR system = $3) AND ($4 = '' OR action = $4)
			AND ($5 = '' OR assistant_id = $5)
		GROUP BY kind, reason ORDER BY kind, n DESC, reason`, f.From, f.To, f.System, f.Action, f.Assistant)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[ReasonCount])
	if err != nil {
		return nil, fmt.Errorf("store.ReasonCounts: %w", err)
	}
	return out, nil
}

// RefusalDay is one day of dry-run refusals and attempts after one.
type RefusalDay struct {
	Day          time.Time `db:"day"`
	Refused      int64     `db:"refused"`
	BlockedAfter int64     `db:"blocked_after"`
}

// RefusalDays sums the refusal roll-up per day over the filter.
func (s *Store) RefusalDays(ctx context.Context, f MetricsFilter) ([]RefusalDay, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT day, sum(refused)::bigint AS refused, sum(blocked_after)::bigint AS blocked_after FROM metrics_refusal_daily
		WHERE day >= $1::date AND day < $2::date AND ($3 = '' OR system = $3) AND ($4 = '' OR action = $4)
			AND ($5 = '' OR assistant_id = $5)
		GROUP BY day ORDER BY day`, f.From, f.To, f.System, f.Action, f.Assistant)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[RefusalDay])
	if err != nil {
		return nil, fmt.Errorf("store.RefusalDays: %w", err)
	}
	return out, nil
}

// ConversationDay is one row of metrics_conversation_daily.
type ConversationDay struct {
	Day            time.Time `db:"day"`
	Intent         string    `db:"intent"`
	AssistantID    string    `db:"assistant_id"`
	Conversations  int64     `db:"conversations"`
	Contained      int64     `db:"contained"`
	Clarified      int64     `db:"clarified"`
	HandedOff      int64     `db:"handed_off"`
	Resolved       int64     `db:"resolved"`
	ResolutionHist []int64   `db:"resolution_hist"`
}

// ConversationDays reads the conversation roll-up rows the filter selects
// that count in the metrics: conversations with a task of their assistant
// whose customer an assertion vouched for, and every conversation of an assistant an admin lets report
// without one (assistants.reports_without_task, read here so a changed
// grant shows at once). The others are ReportsWithoutTask.
func (s *Store) ConversationDays(ctx context.Context, f MetricsFilter) ([]ConversationDay, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT d.day, d.intent, d.assistant_id, d.conversations, d.contained, d.clarified, d.handed_off, d.resolved,
			d.resolution_hist
		FROM metrics_conversation_daily d LEFT JOIN assistants a ON a.id = d.assistant_id
		WHERE d.day >= $1::date AND d.day < $2::date AND ($3 = '' OR d.intent = $3) AND ($4 = '' OR d.assistant_id = $4)
			AND (d.counted OR coalesce(a.reports_without_task, false))
		ORDER BY d.day, d.intent`, f.From, f.To, f.Intent, f.Assistant)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[ConversationDay])
	if err != nil {
		return nil, fmt.Errorf("store.ConversationDays: %w", err)
	}
	return out, nil
}

// UncountedReport is what one assistant reported, over a filter, on
// conversations that do not count in the metrics: no task of its own in
// them whose customer the business vouched for (a task opened on its
// any-customer grant is not one) and no admin's grant to count without
// one.
type UncountedReport struct {
	AssistantID   string `db:"assistant_id"`
	Conversations int64  `db:"conversations"`
	Events        int64  `db:"events"`
}

// ReportsWithoutTask sums, per assistant, the conversations that started in
// the filter's days (and its intent and assistant) whose events do not
// count, and their events; the assistants with the most first.
func (s *Store) ReportsWithoutTask(ctx context.Context, f MetricsFilter) ([]UncountedReport, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT d.assistant_id, sum(d.conversations)::bigint AS conversations, sum(d.events)::bigint AS events
		FROM metrics_conversation_daily d LEFT JOIN assistants a ON a.id = d.assistant_id
		WHERE d.day >= $1::date AND d.day < $2::date AND ($3 = '' OR d.intent = $3) AND ($4 = '' OR d.assistant_id = $4)
			AND NOT d.counted AND NOT coalesce(a.reports_without_task, false)
		GROUP BY d.assistant_id ORDER BY conversations DESC, d.assistant_id`, f.From, f.To, f.Intent, f.Assistant)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[UncountedReport])
	if err != nil {
		return nil, fmt.Errorf("store.ReportsWithoutTask: %w", err)
	}
	return out, nil
}

// Unverified counts the invocations whose outcome is unknown right now and
// returns when the oldest of them last changed (zero when there are none).
// Only the system, action and assistant of f apply: it is a current state.
func (s *Store) Unverified(ctx context.Context, f MetricsFilter) (int64, time.Time, error) {
	var n int64
	var oldest *time.Time
	err := s.pool.QueryRow(ctx, `
		SELECT count(*), min(i.updated_at) FROM invocations i JOIN tasks t ON t.id = i.task_id
		WHERE i.state = 'unverified' AND ($1 = '' OR i.system = $1) AND ($2 = '' OR i.action = $2)
			AND ($3 = '' OR coalesce(t.assistant_id, '') = $3)`, f.System, f.Action, f.Assistant).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("store.Unverified: %w", err)
	}
	if oldest == nil {
		return n, time.Time{}, nil
	}
	return n, *oldest, nil
}

// InvocationStateCounts counts invocations per state, for operators.
func (s *Store) InvocationStateCounts(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT state, count(*) FROM invocations GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("store.InvocationStateCounts: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("store.InvocationStateCounts: %w", err)
		}
		out[st] = n
	}
	return out, rows.Err()
}

// ProposalSample is one past proposal, replayed by a policy what-if.
type ProposalSample struct {
	ID          string `db:"id"`
	AmountCents *int64 `db:"amount_cents"`
	Reversal    bool   `db:"reversal"`
	// Currency is the amount's, upper case; US dollars when the quote
	// names none.
	Currency string `db:"currency"`
}

// ProposalsSince lists an action's proposals made at or after since.
func (s *Store) ProposalsSince(ctx context.Context, system, action string, since time.Time) ([]ProposalSample, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT id, amount_cents, compensates_id IS NOT NULL AS reversal, `+exposureCurrency+` AS currency FROM invocations
		WHERE system = $1 AND action = $2 AND created_at >= $3 ORDER BY created_at`, system, action, since)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[ProposalSample])
	if err != nil {
		return nil, fmt.Errorf("store.ProposalsSince: %w", err)
	}
	return out, nil
}

// MetricsDimensions lists the values the filters can take: systems,
// actions, intents and assistants seen in the roll-ups.
func (s *Store) MetricsDimensions(ctx context.Context) (systems, actions, intents, assistants []string, err error) {
	q := func(sql string) ([]string, error) {
		rows, _ := s.pool.Query(ctx, sql)
		return pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if systems, err = q(distinctValues("metrics_invocation_daily", "system") + `
		SELECT system FROM policies UNION SELECT v FROM d WHERE v IS NOT NULL ORDER BY 1`); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("store.MetricsDimensions: %w", err)
	}
	if actions, err = q(distinctValues("metrics_invocation_daily", "action") + `
		SELECT action FROM policies UNION SELECT v FROM d WHERE v IS NOT NULL ORDER BY 1`); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("store.MetricsDimensions: %w", err)
	}
	if intents, err = q(distinctValues("metrics_conversation_daily", "intent") + `
		SELECT v FROM d WHERE v IS NOT NULL ORDER BY 1`); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("store.MetricsDimensions: %w", err)
	}
	if assistants, err = q(`SELECT id FROM assistants ORDER BY id`); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("store.MetricsDimensions: %w", err)
	}
	return systems, actions, intents, assistants, nil
}

// distinctValues is a WITH clause naming d(v): the distinct values of a
// roll-up's column, found by skipping through the column's index from one
// value to the next (migration 00017), so the cost follows the number of
// values, not the years of history. table and column are constants of this
// file, never input.
func distinctValues(table, column string) string {
	return `WITH RECURSIVE d(v) AS (
		SELECT min(` + column + `) FROM ` + table + `
		UNION ALL
		SELECT (SELECT min(` + column + `) FROM ` + table + ` WHERE ` + column + ` > d.v) FROM d WHERE d.v IS NOT NULL)`
}
