package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// BucketEdges are the lower edges, in seconds, of the duration histogram
// buckets the metric roll-ups keep (approval waits, times to resolution):
// bucket 0 is [0, 1 min), bucket i is [BucketEdges[i-1], BucketEdges[i]),
// and the last bucket is 7 days or more.
var BucketEdges = []float64{60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 172800, 604800}

// refreshLookback is how many event ids before the watermark each refresh
// reads again: an event whose transaction committed after a later id was
// already folded in is still picked up, and recomputing a day twice is
// harmless.
const refreshLookback = 1000

// settledStates are the invocation states that end a proposal's journey for
// the success rate (unverified counts as not completed until reconciled).
const settledStates = `('completed', 'reversed', 'failed', 'unverified', 'not_dispatched', 'rejected', 'expired')`

// resolvedModes are the conversation modes that mean the request was dealt
// with.
const resolvedModes = `('answered', 'read_and_answered', 'linked', 'executed', 'resolved')`

// RefreshReport says what one roll-up refresh did.
type RefreshReport struct {
	InvocationDays   int
	ConversationDays int
	Conversations    int
}

// RefreshMetrics folds the events and conversation events newer than the
// watermarks into the daily roll-ups: it recomputes only the days those
// events touched, so its cost follows the new activity, not the history.
// Concurrent refreshes serialise on an advisory lock.
func (s *Store) RefreshMetrics(ctx context.Context) (RefreshReport, error) {
	var rep RefreshReport
	err := s.InTx(ctx, func(t *Tx) error {
		if err := t.advisoryLock(ctx, "metrics-refresh"); err != nil {
			return err
		}
		var err error
		if rep.InvocationDays, err = t.refreshInvocationDays(ctx); err != nil {
			return err
		}
		rep.Conversations, rep.ConversationDays, err = t.refreshConversations(ctx)
		return err
	})
	if err != nil {
		return RefreshReport{}, fmt.Errorf("store.RefreshMetrics: %w", err)
	}
	return rep, nil
}

func (t *Tx) watermark(ctx context.Context, name string) (int64, error) {
	var id int64
	err := t.tx.QueryRow(ctx, `SELECT last_id FROM metrics_watermarks WHERE name = $1 FOR UPDATE`, name).Scan(&id)
	return id, err
}

func (t *Tx) setWatermark(ctx context.Context, name string, id int64) error {
	_, err := t.tx.Exec(ctx, `UPDATE metrics_watermarks SET last_id = GREATEST(last_id, $2) WHERE name = $1`, name, id)
	return err
}

func (t *Tx) refreshInvocationDays(ctx context.Context) (int, error) {
	w, err := t.watermark(ctx, "events")
	if err != nil {
		return 0, err
	}
	from := max(w-refreshLookback, 0)
	var maxID int64
	if err := t.tx.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM events`).Scan(&maxID); err != nil {
		return 0, err
	}
	if maxID <= w {
		return 0, nil
	}
	rows, err := t.tx.Query(ctx, `
		SELECT DISTINCT (i.created_at AT TIME ZONE 'UTC')::date
		FROM events e JOIN invocations i ON i.id = e.invocation_id
		WHERE e.id > $1 AND e.id <= $2
		UNION
		SELECT DISTINCT (e.at AT TIME ZONE 'UTC')::date
		FROM events e
		WHERE e.id > $1 AND e.id <= $2 AND e.action IN ('proposal.refused', 'proposal.blocked_after_refusal')`, from, maxID)
	if err != nil {
		return 0, err
	}
	var days []time.Time
	for rows.Next() {
		var d time.Time
		if err := rows.Scan(&d); err != nil {
			return 0, err
		}
		days = append(days, d)
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, d := range days {
		if err := t.recomputeInvocationDay(ctx, d); err != nil {
			return 0, err
		}
	}
	return len(days), t.setWatermark(ctx, "events", maxID)
}

// histogramSQL counts, for each bucket of BucketEdges, the rows matching
// cond whose duration in seconds is secs.
func histogramSQL(cond, secs string) string {
	edges := make([]string, len(BucketEdges))
	for i, e := range BucketEdges {
		edges[i] = fmt.Sprintf("%g", e)
	}
	arr := "ARRAY[" + strings.Join(edges, ",") + "]::float8[]"
	parts := make([]string, len(BucketEdges)+1)
	for b := range parts {
		parts[b] = fmt.Sprintf("count(*) FILTER (WHERE %s AND width_bucket(%s, %s) = %d)", cond, secs, arr, b)
	}
	return "ARRAY[" + strings.Join(parts, ", ") + "]"
}

func (t *Tx) recomputeInvocationDay(ctx context.Context, day time.Time) error {
	start := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 0, 1)
	const personApproved = `i.deadline_at IS NOT NULL AND i.approved_at IS NOT NULL`
	stmts := []string{
		`DELETE FROM metrics_invocation_daily WHERE day = $1::date`,
		`DELETE FROM metrics_reason_daily WHERE day = $1::date`,
		`DELETE FROM metrics_refusal_daily WHERE day = $1::date`,
		`INSERT INTO metrics_invocation_daily (day, system, action, assistant_id, stage, proposed, settled, completed,
			reversed_7d, person_approved, unedited, disagreed, wait_hist)
		SELECT $1::date, i.system, i.action, coalesce(t.assistant_id, ''), i.policy_stage,
			count(*),
			count(*) FILTER (WHERE i.state IN ` + settledStates + `),
			count(*) FILTER (WHERE i.state IN ('completed', 'reversed')),
			count(*) FILTER (WHERE i.state = 'reversed' AND i.updated_at <= i.finished_at + interval '7 days'),
			count(*) FILTER (WHERE ` + personApproved + `),
			count(*) FILTER (WHERE ` + personApproved + ` AND i.approved_args_hash = i.args_hash),
			count(*) FILTER (WHERE i.summary_disagrees),
			` + histogramSQL(personApproved, `extract(epoch FROM i.approved_at - i.created_at)::float8`) + `
		FROM invocations i JOIN tasks t ON t.id = i.task_id
		WHERE i.created_at >= $2 AND i.created_at < $3
		GROUP BY i.system, i.action, coalesce(t.assistant_id, ''), i.policy_stage`,
		`INSERT INTO metrics_reason_daily (day, system, action, assistant_id, kind, reason, n)
		SELECT $1::date, i.system, i.action, coalesce(t.assistant_id, ''), k.kind, k.reason, count(*)
		FROM invocations i JOIN tasks t ON t.id = i.task_id
		CROSS JOIN LATERAL (SELECT CASE i.state WHEN 'not_dispatched' THEN 'not_dispatched' ELSE 'rejected' END AS kind,
			CASE i.state WHEN 'not_dispatched' THEN coalesce(nullif(i.not_dispatched_reason, ''), 'no reason recorded')
				ELSE coalesce(nullif(i.decision_reason, ''), 'no reason given') END AS reason) k
		WHERE i.created_at >= $2 AND i.created_at < $3 AND i.state IN ('not_dispatched', 'rejected')
		GROUP BY i.system, i.action, coalesce(t.assistant_id, ''), k.kind, k.reason`,
		`INSERT INTO metrics_refusal_daily (day, system, action, assistant_id, refused, blocked_after)
		SELECT $1::date, coalesce(e.data->>'system', ''), coalesce(e.data->>'action', ''), coalesce(t.assistant_id, ''),
			count(*) FILTER (WHERE e.action = 'proposal.refused'),
			count(*) FILTER (WHERE e.action = 'proposal.blocked_after_refusal')
		FROM events e LEFT JOIN tasks t ON t.id = e.task_id
		WHERE e.action IN ('proposal.refused', 'proposal.blocked_after_refusal') AND e.at >= $2 AND e.at < $3
		GROUP BY 1, 2, 3, 4`,
	}
	for _, q := range stmts {
		args := []any{start, start, end}
		if strings.HasPrefix(q, "DELETE") {
			args = args[:1]
		}
		if _, err := t.tx.Exec(ctx, q, args...); err != nil {
			return fmt.Errorf("recompute %s: %w", start.Format(time.DateOnly), err)
		}
	}
	return nil
}

func (t *Tx) refreshConversations(ctx context.Context) (conversations, days int, err error) {
	w, err := t.watermark(ctx, "conversation_events")
	if err != nil {
		return 0, 0, err
	}
	from := max(w-refreshLookback, 0)
	var maxID int64
	if err := t.tx.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM conversation_events`).Scan(&maxID); err != nil {
		return 0, 0, err
	}
	// The touched conversations: those with new events, and those a
	// vouched task was opened for since (listed by a trigger on tasks,
	// migrations 00029 and 00034), whose events may now count.
	if _, err := t.tx.Exec(ctx, `CREATE TEMP TABLE metrics_touched (conversation_id text PRIMARY KEY) ON COMMIT DROP`); err != nil {
		return 0, 0, err
	}
	if _, err := t.tx.Exec(ctx, `
		WITH stale AS (DELETE FROM metrics_conversations_stale RETURNING conversation_id)
		INSERT INTO metrics_touched SELECT DISTINCT conversation_id FROM stale`); err != nil {
		return 0, 0, err
	}
	if maxID > w {
		if _, err := t.tx.Exec(ctx, `INSERT INTO metrics_touched SELECT DISTINCT conversation_id FROM conversation_events
			WHERE id > $1 AND id <= $2 ON CONFLICT DO NOTHING`, from, maxID); err != nil {
			return 0, 0, err
		}
	}
	var touched bool
	if err := t.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM metrics_touched)`).Scan(&touched); err != nil {
		return 0, 0, err
	}
	if !touched {
		_, err := t.tx.Exec(ctx, `DROP TABLE metrics_touched`)
		return 0, 0, err
	}
	// The days the touched conversations started on before and after
	// folding: both change.
	if _, err := t.tx.Exec(ctx, `
		CREATE TEMP TABLE metrics_touched_days ON COMMIT DROP AS
		SELECT DISTINCT (m.started_at AT TIME ZONE 'UTC')::date AS day
		FROM metrics_conversations m JOIN metrics_touched USING (conversation_id)`); err != nil {
		return 0, 0, err
	}
	// A conversation counts when its assistant has a task in it whose
	// customer the business vouched for: a signed assertion. A task opened
	// on the assistant's any-customer grant vouches for nobody (the
	// assistant admitted the customer itself), so it counts no more than
	// no task; an admin's grant to count the assistant's reports without
	// one applies when the roll-ups are read.
	tag, err := t.tx.Exec(ctx, `
		INSERT INTO metrics_conversations AS m (conversation_id, assistant_id, intent, started_at, ended_at,
			handed_off, clarified, contained, resolved, events, counted)
		SELECT f.*, EXISTS (SELECT 1 FROM tasks t WHERE t.conversation_id = f.conversation_id
			AND t.assistant_id = f.assistant_id AND t.vouched = 'assertion')
		FROM (SELECT c.conversation_id,
			(array_agg(c.assistant_id ORDER BY c.at, c.id))[1] AS assistant_id,
			(array_agg(c.intent ORDER BY c.at, c.id))[1],
			min(c.at),
			coalesce(max(c.at) FILTER (WHERE c.mode IN `+resolvedModes+`), max(c.at)),
			bool_or(c.mode = 'handed_off'),
			bool_or(c.mode = 'clarified'),
			bool_or(c.mode IN `+resolvedModes+`) AND NOT bool_or(c.mode = 'handed_off'),
			bool_or(c.mode IN `+resolvedModes+`),
			count(*)
		FROM conversation_events c JOIN metrics_touched USING (conversation_id)
		GROUP BY c.conversation_id) f
		ON CONFLICT (conversation_id) DO UPDATE SET assistant_id = excluded.assistant_id, intent = excluded.intent,
			started_at = excluded.started_at, ended_at = excluded.ended_at, handed_off = excluded.handed_off,
			clarified = excluded.clarified, contained = excluded.contained, resolved = excluded.resolved,
			events = excluded.events, counted = excluded.counted`)
	if err != nil {
		return 0, 0, err
	}
	conversations = int(tag.RowsAffected())
	rows, err := t.tx.Query(ctx, `
		SELECT day FROM metrics_touched_days
		UNION
		SELECT (m.started_at AT TIME ZONE 'UTC')::date FROM metrics_conversations m JOIN metrics_touched USING (conversation_id)`)
	if err != nil {
		return 0, 0, err
	}
	var list []time.Time
	for rows.Next() {
		var d time.Time
		if err := rows.Scan(&d); err != nil {
			return 0, 0, err
		}
		list = append(list, d)
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	resolution := histogramSQL("resolved", "extract(epoch FROM ended_at - started_at)::float8")
	for _, d := range list {
		start := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
		if _, err := t.tx.Exec(ctx, `DELETE FROM metrics_conversation_daily WHERE day = $1::date`, start); err != nil {
			return 0, 0, err
		}
		if _, err := t.tx.Exec(ctx, `
			INSERT INTO metrics_conversation_daily (day, intent, assistant_id, counted, conversations, contained, clarified,
				handed_off, resolved, resolution_hist, events)
			SELECT $1::date, intent, assistant_id, counted, count(*), count(*) FILTER (WHERE contained),
				count(*) FILTER (WHERE clarified), count(*) FILTER (WHERE handed_off), count(*) FILTER (WHERE resolved),
				`+resolution+`, sum(events)
			FROM metrics_conversations WHERE started_at >= $2 AND started_at < $3
			GROUP BY intent, assistant_id, counted`, start, start, start.AddDate(0, 0, 1)); err != nil {
			return 0, 0, err
		}
	}
	if _, err := t.tx.Exec(ctx, `DROP TABLE metrics_touched, metrics_touched_days`); err != nil {
		return 0, 0, err
	}
	return conversations, len(list), t.setWatermark(ctx, "conversation_events", maxID)
}
