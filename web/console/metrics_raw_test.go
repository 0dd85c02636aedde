package console_test

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"testing"
	"time"

	"countersign/web/webtest"
)

// rawInvocation is an invocation as the raw rows have it.
type rawInvocation struct {
	day                       time.Time
	system, action, assistant string
	state                     string
	waited                    *time.Duration
	unedited, disagrees       bool
	reversedWithin7d          bool
}

// rawMetrics recomputes, from the raw invocations, events and conversation
// events, the page's figure for each metric under the filter, independently
// of the roll-ups: the text the page leads with and its detail.
func rawMetrics(t *testing.T, b *webtest.Stack, from, to time.Time, system, action, intent, assistant string) map[string][2]string {
	t.Helper()
	ctx := context.Background()
	rows, err := b.Store.Pool().Query(ctx, `
		SELECT i.created_at, i.system, i.action, coalesce(t.assistant_id, ''), i.state,
			CASE WHEN i.deadline_at IS NOT NULL AND i.approved_at IS NOT NULL THEN extract(epoch FROM i.approved_at - i.created_at) END,
			coalesce(i.approved_args_hash = i.args_hash, false), i.summary_disagrees,
			i.state = 'reversed' AND i.updated_at <= i.finished_at + interval '7 days'
		FROM invocations i JOIN tasks t ON t.id = i.task_id`)
	if err != nil {
		t.Fatal(err)
	}
	var invs []rawInvocation
	for rows.Next() {
		var r rawInvocation
		var waited *float64
		if err := rows.Scan(&r.day, &r.system, &r.action, &r.assistant, &r.state, &waited, &r.unedited, &r.disagrees, &r.reversedWithin7d); err != nil {
			t.Fatal(err)
		}
		if waited != nil {
			d := time.Duration(*waited * float64(time.Second))
			r.waited = &d
		}
		invs = append(invs, r)
	}
	in := func(at time.Time) bool { return !at.Before(from) && at.Before(to) }
	var proposed, settled, completed, reversed, person, unedited, disagreed int64
	var waits []time.Duration
	for _, r := range invs {
		if !in(r.day) || (system != "" && r.system != system) || (action != "" && r.action != action) || (assistant != "" && r.assistant != assistant) {
			continue
		}
		proposed++
		switch r.state {
		case "completed", "reversed":
			settled++
			completed++
		case "failed", "unverified", "not_dispatched", "rejected", "expired":
			settled++
		}
		if r.reversedWithin7d {
			reversed++
		}
		if r.waited != nil {
			person++
			waits = append(waits, *r.waited)
			if r.unedited {
				unedited++
			}
		}
		if r.disagrees {
			disagreed++
		}
	}
	// Conversations: fold each one's events in order, those that count
	// only: a task of their assistant in them whose customer an assertion
	// vouched for (not its any-customer grant), or the assistant's grant
	// to count its reports without one.
	type conv struct {
		intent, assistant              string
		start, end                     time.Time
		resolved, handedOff, clarified bool
	}
	crows, err := b.Store.Pool().Query(ctx, `SELECT c.conversation_id, c.assistant_id, c.intent, c.mode, c.at FROM conversation_events c
		WHERE EXISTS (SELECT 1 FROM tasks t WHERE t.conversation_id = c.conversation_id AND t.assistant_id = c.assistant_id AND t.vouched = 'assertion')
			OR EXISTS (SELECT 1 FROM assistants a WHERE a.id = c.assistant_id AND a.reports_without_task)
		ORDER BY c.at, c.id`)
	if err != nil {
		t.Fatal(err)
	}
	convs := map[string]*conv{}
	for crows.Next() {
		var id, asst, in, mode string
		var at time.Time
		if err := crows.Scan(&id, &asst, &in, &mode, &at); err != nil {
			t.Fatal(err)
		}
		c := convs[id]
		if c == nil {
			c = &conv{intent: in, assistant: asst, start: at}
			convs[id] = c
		}
		switch mode {
		case "answered", "read_and_answered", "linked", "executed", "resolved":
			c.resolved, c.end = true, at
		case "handed_off":
			c.handedOff = true
		case "clarified":
			c.clarified = true
		}
	}
	var conversations, contained, clarified, handedOff int64
	var resolutions []time.Duration
	for _, c := range convs {
		if !in(c.start) || (intent != "" && c.intent != intent) || (assistant != "" && c.assistant != assistant) {
			continue
		}
		conversations++
		if c.resolved && !c.handedOff {
			contained++
		}
		if c.clarified {
			clarified++
		}
		if c.handedOff {
			handedOff++
		}
		if c.resolved {
			resolutions = append(resolutions, c.end.Sub(c.start))
		}
	}
	var refused, blocked int64
	erows, err := b.Store.Pool().Query(ctx, `
		SELECT e.action, e.at, coalesce(e.data->>'system', ''), coalesce(e.data->>'action', ''), coalesce(t.assistant_id, '')
		FROM events e LEFT JOIN tasks t ON t.id = e.task_id WHERE e.action IN ('proposal.refused', 'proposal.blocked_after_refusal')`)
	if err != nil {
		t.Fatal(err)
	}
	for erows.Next() {
		var act, sys, a, asst string
		var at time.Time
		if err := erows.Scan(&act, &at, &sys, &a, &asst); err != nil {
			t.Fatal(err)
		}
		if !in(at) || (system != "" && sys != system) || (action != "" && a != action) || (assistant != "" && asst != assistant) {
			continue
		}
		if act == "proposal.refused" {
			refused++
		} else {
			blocked++
		}
	}
	pct := func(n, d int64) [2]string {
		if d == 0 {
			return [2]string{"no data", ""}
		}
		return [2]string{fmt.Sprintf("%.1f%%", float64(n)/float64(d)*100), grouped(n) + " of " + grouped(d)}
	}
	return map[string][2]string{
		"containment":           pct(contained, conversations),
		"action_success":        pct(completed, settled),
		"reversal":              pct(reversed, completed),
		"clarification":         pct(clarified, conversations),
		"handoff":               pct(handedOff, conversations),
		"resolution_time":       percentiles(resolutions),
		"acceptance":            pct(unedited, person),
		"disagreement":          pct(disagreed, proposed),
		"approval_wait":         percentiles(waits),
		"blocked_after_refusal": pct(blocked, refused),
	}
}

// percentiles reads the half and 9-in-10 times the way the page defines them: the upper
// edge of the bucket that holds the value of rank ⌈q·n⌉.
func percentiles(ds []time.Duration) [2]string {
	if len(ds) == 0 {
		return [2]string{"no data", ""}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	edges := []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour,
		8 * time.Hour, 24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour}
	names := []string{"1m", "5m", "15m", "30m", "1h", "2h", "4h", "8h", "24h", "2d", "7d"}
	label := func(q float64) string {
		v := ds[int(math.Ceil(q*float64(len(ds))))-1]
		for i, e := range edges {
			if v < e {
				return "under " + names[i]
			}
		}
		return "7 days or more"
	}
	return [2]string{"half " + label(0.5) + " · 9 in 10 " + label(0.9), "over " + grouped(int64(len(ds)))}
}

// grouped writes n with a comma every three digits, as the page must.
func grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
