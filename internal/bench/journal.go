package bench

import (
	"context"
	"fmt"
	"time"
)

// Phase is when one kind of event of a write's journal is written,
// counted from its invocation.proposed event.
type Phase struct {
	Event string  `json:"event"`
	Count int     `json:"count"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
}

// phases reads the journal of every completed invocation of action: where
// a write's time goes between its proposal and its verified completion.
func (r *runner) phases(ctx context.Context, action string) ([]Phase, error) {
	rows, err := r.world.Pool().Query(ctx, `
		SELECT e.action, count(*)::int,
			percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e.at - p.at) * 1000),
			percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM e.at - p.at) * 1000)
		FROM invocations i
		JOIN events p ON p.invocation_id = i.id AND p.action = 'invocation.proposed'
		JOIN events e ON e.invocation_id = i.id AND e.id <> p.id
		WHERE i.action = $1 AND i.state = 'completed'
		GROUP BY e.action ORDER BY 3`, action)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Phase
	for rows.Next() {
		var ph Phase
		if err := rows.Scan(&ph.Event, &ph.Count, &ph.P50MS, &ph.P99MS); err != nil {
			return nil, err
		}
		out = append(out, ph)
	}
	return out, rows.Err()
}

// commitsPerWrite reads, from the journal of the completed writes of action
// proposed since a time, how many durable commits each made before its
// request left and after: the distinct transactions (xmin) of its events
// up to dispatch.started (that transaction's lease is the one the request
// left under) and of the adapters' request ledger row that began the call
// (begun_xid), then those of its later events and of the ledger row's
// outcome (its xmin). Every state change of the console journals an event
// in its transaction, so a commit that wrote nothing there is not missed.
func (r *runner) commitsPerWrite(ctx context.Context, action string, since time.Time) error {
	var n int
	var before, after float64
	err := r.world.Pool().QueryRow(ctx, `
		WITH w AS (
			SELECT i.id, i.system, i.idempotency_key, s.id AS started
			FROM invocations i
			JOIN events s ON s.invocation_id = i.id AND s.action = 'dispatch.started'
			WHERE i.action = $1 AND i.state = 'completed' AND i.created_at >= $2
		), x AS (
			SELECT w.id, e.id <= w.started AS before, e.xmin::text AS xid
			FROM w JOIN events e ON e.invocation_id = w.id
			UNION
			SELECT w.id, true, xid(a.begun_xid)::text
			FROM w JOIN adapter_requests a ON a.system = w.system AND a.idempotency_key = w.idempotency_key
			WHERE a.begun_xid IS NOT NULL
			UNION
			SELECT w.id, false, a.xmin::text
			FROM w JOIN adapter_requests a ON a.system = w.system AND a.idempotency_key = w.idempotency_key
			WHERE a.finished_at IS NOT NULL
		)
		SELECT count(DISTINCT id)::int,
			COALESCE(count(*) FILTER (WHERE before)::float8 / NULLIF(count(DISTINCT id), 0), 0),
			COALESCE(count(*) FILTER (WHERE NOT before)::float8 / NULLIF(count(DISTINCT id), 0), 0)
		FROM x`, action, since).Scan(&n, &before, &after)
	if err != nil {
		return fmt.Errorf("bench: commits per write: %w", err)
	}
	r.log("  commits per write, from the journal of %d completed writes: %.2f before the request left, %.2f after", n, before, after)
	note := fmt.Sprintf("from the journal of %d completed automatic writes: distinct transactions of their events and of the request ledger's rows", n)
	r.add(Figure{Name: "commits_per_write_before", Value: before, Unit: "commits", Target: "≤ 2", Met: met(n > 0 && before <= 2),
		Note: note + ", up to the one whose lease the request left under"})
	r.add(Figure{Name: "commits_per_write_after", Value: after, Unit: "commits", Target: "≤ 1", Met: met(n > 0 && after <= 1),
		Note: note + ", after the request left (outcome and verification)"})
	return nil
}
