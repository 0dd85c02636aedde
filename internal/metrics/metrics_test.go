package metrics_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/internal/metrics"
	"countersign/store"
	"countersign/store/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// day is the crafted histories' day of activity.
var day = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

// history writes crafted raw rows: tasks, invocations with their events,
// conversation events, refusals.
type history struct {
	t    *testing.T
	pool *pgxpool.Pool
	st   *store.Store
	n    int
}

func newHistory(t *testing.T) *history {
	t.Helper()
	pool := dbtest.New(t)
	h := &history{t: t, pool: pool, st: store.New(pool)}
	// The crafted conversations open no task: the assistants' reports
	// count by an admin's grant (TestReportsWithoutTaskCountNowhere
	// takes it away).
	h.exec(`INSERT INTO assistants (id, name, created_at, reports_without_task) VALUES ('asst_a', 'A', $1, true),
		('asst_b', 'B', $1, true)`, day)
	for _, id := range []string{"task_a", "task_b"} {
		h.exec(`INSERT INTO tasks (id, assistant_id, customer_ref, conversation_id, allowed_actions, write_budget, inflight_limit,
			rate_per_minute, expires_at, state, created_at, updated_at)
			VALUES ($1, $2, 'cust', 'conv_' || $1, '{issue_refund}', 100, 5, 60, $3, 'active', $3, $3)`, id, "asst_"+id[5:], day)
	}
	return h
}

func (h *history) exec(sql string, args ...any) {
	h.t.Helper()
	if _, err := h.pool.Exec(context.Background(), sql, args...); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
}

// inv is one crafted invocation.
type inv struct {
	task, action, state     string
	stage                   int
	created                 time.Time
	waitedFor               time.Duration // set: a person approved after this long
	autoApproved, edited    bool
	disagrees               bool
	finished, updated       time.Time
	notDispatched, rejected string
}

func (h *history) inv(i inv) string {
	h.t.Helper()
	h.n++
	id := "inv_" + string(rune('a'+h.n))
	if i.task == "" {
		i.task = "task_a"
	}
	if i.action == "" {
		i.action = "issue_refund"
	}
	if i.stage == 0 {
		i.stage = 3
	}
	if i.created.IsZero() {
		i.created = day.Add(9 * time.Hour)
	}
	if i.updated.IsZero() {
		i.updated = i.created.Add(time.Hour)
	}
	var deadline, approved, finished any
	approvedHash := any(nil)
	if i.waitedFor > 0 {
		deadline, approved = i.created.Add(24*time.Hour), i.created.Add(i.waitedFor)
		approvedHash = []byte("hash")
		if i.edited {
			approvedHash = []byte("edited")
		}
	}
	if i.autoApproved {
		approved, approvedHash = i.created, []byte("hash")
	}
	if !i.finished.IsZero() {
		finished = i.finished
	}
	var nd, rj any
	if i.notDispatched != "" {
		nd = i.notDispatched
	}
	if i.rejected != "" {
		rj = i.rejected
	}
	h.exec(`INSERT INTO invocations (id, task_id, conversation_id, system, action, target_kind, target_id, target_display, state,
		proposed_args, args_hash, approved_args_hash, quote, summary_disagrees, idempotency_key, policy_stage, policy_version,
		deadline_at, approved_at, finished_at, not_dispatched_reason, decision_reason, created_at, updated_at)
		VALUES ($1, $2, 'conv', 'shop', $3, 'order', 'o1', 'Order o1', $4, '{}', 'hash', $5, '{}', $6, 'key_' || $1, $7, 1,
		$8, $9, $10, $11, $12, $13, $14)`,
		id, i.task, i.action, i.state, approvedHash, i.disagrees, i.stage, deadline, approved, finished, nd, rj, i.created, i.updated)
	h.exec(`INSERT INTO events (at, actor_kind, actor_id, action, task_id, invocation_id) VALUES ($1, 'assistant', 'asst_a', 'invocation.proposed', $2, $3)`,
		i.created, i.task, id)
	return id
}

// conv writes a conversation's events: intent of each, mode, minutes after
// the start at 10:00 on day.
func (h *history) conv(id, assistant string, events ...any) {
	h.t.Helper()
	for k := 0; k < len(events); k += 3 {
		h.exec(`INSERT INTO conversation_events (conversation_id, assistant_id, intent, mode, at) VALUES ($1, $2, $3, $4, $5)`,
			id, assistant, events[k], events[k+1], day.Add(10*time.Hour+time.Duration(events[k+2].(int))*time.Minute))
	}
}

func (h *history) refusal(action string) {
	h.t.Helper()
	h.exec(`INSERT INTO events (at, actor_kind, actor_id, action, task_id, data) VALUES ($1, 'assistant', 'asst_a', $2, 'task_a',
		'{"system":"shop","action":"issue_refund"}')`, day.Add(11*time.Hour), action)
}

func (h *history) report(f metrics.Filter, now time.Time) metrics.Report {
	h.t.Helper()
	if _, err := h.st.RefreshMetrics(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	rep, err := metrics.Build(context.Background(), h.st, f, now)
	if err != nil {
		h.t.Fatal(err)
	}
	return rep
}

func oneDay() metrics.Filter { return metrics.Filter{From: day, To: day.AddDate(0, 0, 1)} }

// shown is a metric as the page leads with it, with its fraction.
type shown struct {
	Text     string
	Num, Den int64
	Warn     bool
}

func results(rep metrics.Report) map[string]shown {
	out := map[string]shown{}
	for _, r := range rep.Results {
		out[r.ID] = shown{Text: r.Format(r.Value), Num: r.Value.Num, Den: r.Value.Den, Warn: r.Value.Warn}
	}
	return out
}

// TestEmptyHistory: with nothing recorded every metric says "no data",
// never NaN, and nothing warns.
func TestEmptyHistory(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	rep := h.report(oneDay(), day)
	for _, r := range rep.Results {
		if got := r.Format(r.Value); got != "no data" || r.Value.Warn || math.IsNaN(r.Value.Ratio) {
			t.Errorf("%s: %q (warn %v, ratio %v), want no data", r.ID, got, r.Value.Warn, r.Value.Ratio)
		}
		for _, p := range r.Trend {
			if p.Value.HasData {
				t.Errorf("%s: trend point %s has data", r.ID, p.Day)
			}
		}
	}
	if rep.Unverified != 0 || rep.OldestUnverified != 0 || len(rep.HandoffByIntent) != 0 || len(rep.NotDispatched) != 0 {
		t.Errorf("empty history reported %+v", rep)
	}
	for _, r := range rep.Readiness {
		if r.ErrorRate.HasData || r.EditRate.HasData {
			t.Errorf("readiness of %s has data: %+v", r.Action, r)
		}
	}
}

// TestDivisionByZero: a zero denominator is "no data" for every ratio and
// an empty histogram has no percentile.
func TestDivisionByZero(t *testing.T) {
	t.Parallel()
	for _, d := range metrics.Definitions {
		v := d.Evaluate(metrics.Sums{})
		if v.HasData || d.Format(v) != "no data" {
			t.Errorf("%s over nothing: %+v %q", d.ID, v, d.Format(v))
		}
	}
	if p := metrics.Percentile(nil, 0.9); p != 0 {
		t.Errorf("percentile of nothing = %v", p)
	}
	// Completed with nothing settled cannot happen, but must not divide.
	success, _ := metrics.Lookup("action_success")
	if v := success.Evaluate(metrics.Sums{Completed: 0, Settled: 0, Proposed: 3}); v.HasData {
		t.Errorf("success with 3 open proposals: %+v", v)
	}
}

// TestDefinitionsOnCraftedHistory checks every metric's definition on a
// day whose answer is worked out by hand.
func TestDefinitionsOnCraftedHistory(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	at := day.Add(9 * time.Hour)
	h.inv(inv{state: "completed", waitedFor: 10 * time.Minute, finished: at.Add(time.Hour)})
	h.inv(inv{state: "reversed", autoApproved: true, finished: at.Add(time.Hour), updated: at.Add(49 * time.Hour)})
	h.inv(inv{state: "reversed", autoApproved: true, finished: at.Add(time.Hour), updated: at.Add(9 * 24 * time.Hour)})
	h.inv(inv{state: "failed", autoApproved: true, finished: at.Add(time.Hour)})
	h.inv(inv{state: "rejected", rejected: "wrong amount", finished: at.Add(time.Hour)})
	h.inv(inv{state: "not_dispatched", autoApproved: true, notDispatched: "task paused", finished: at.Add(time.Hour)})
	h.inv(inv{state: "awaiting_approval"})
	h.inv(inv{state: "completed", waitedFor: 3 * time.Hour, edited: true, disagrees: true, finished: at.Add(4 * time.Hour)})
	h.inv(inv{state: "completed", stage: 5, autoApproved: true, task: "task_b", action: "resend_receipt", finished: at.Add(time.Hour)})
	// Outside the period: counts only for "unverified now".
	h.inv(inv{state: "unverified", created: day.AddDate(0, 0, -30), updated: day.Add(8 * time.Hour)})

	h.conv("c1", "asst_a", "informational", "answered", 0)
	h.conv("c2", "asst_a", "transactional_low", "proposed", 0, "transactional_low", "clarified", 1, "transactional_low", "executed", 20)
	h.conv("c3", "asst_b", "transactional_high", "proposed", 0, "transactional_high", "handed_off", 5, "transactional_high", "resolved", 120)
	h.conv("c4", "asst_b", "ambiguous", "clarified", 0)
	h.refusal("proposal.refused")
	h.refusal("proposal.refused")
	h.refusal("proposal.blocked_after_refusal")

	now := day.Add(10 * time.Hour)
	rep := h.report(oneDay(), now)
	want := map[string]shown{
		"containment":           {Text: "50.0%", Num: 2, Den: 4},
		"action_success":        {Text: "62.5%", Num: 5, Den: 8, Warn: true},
		"reversal":              {Text: "20.0%", Num: 1, Den: 5, Warn: true},
		"clarification":         {Text: "50.0%", Num: 2, Den: 4, Warn: true},
		"handoff":               {Text: "25.0%", Num: 1, Den: 4},
		"resolution_time":       {Text: "half under 30m · 9 in 10 under 4h", Den: 3},
		"acceptance":            {Text: "50.0%", Num: 1, Den: 2, Warn: true},
		"disagreement":          {Text: "11.1%", Num: 1, Den: 9, Warn: true},
		"approval_wait":         {Text: "half under 15m · 9 in 10 under 4h", Den: 2},
		"blocked_after_refusal": {Text: "50.0%", Num: 1, Den: 2, Warn: true},
	}
	if diff := cmp.Diff(want, results(rep)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if rep.Unverified != 1 || rep.OldestUnverified != 2*time.Hour {
		t.Errorf("unverified %d, oldest %s; want 1, 2h", rep.Unverified, rep.OldestUnverified)
	}
	wantReasons := []store.ReasonCount{{Kind: "not_dispatched", Reason: "task paused", N: 1}}
	if diff := cmp.Diff(wantReasons, rep.NotDispatched); diff != "" {
		t.Errorf("not dispatched (-want +got):\n%s", diff)
	}
	if len(rep.Rejections) != 1 || rep.Rejections[0].Reason != "wrong amount" {
		t.Errorf("rejections: %+v", rep.Rejections)
	}
	if len(rep.HandoffByIntent) != 4 || rep.HandoffByIntent[0].Label != "transactional_high" || rep.HandoffByIntent[0].Value.Ratio != 1 {
		t.Errorf("handoff by intent, highest first: %+v", rep.HandoffByIntent)
	}

	// The filters narrow: assistant B has one conversation handed off and
	// one invocation (resend_receipt), which completed.
	byB := h.report(metrics.Filter{From: day, To: day.AddDate(0, 0, 1), Assistant: "asst_b"}, now)
	got := results(byB)
	if got["handoff"].Text != "50.0%" || got["action_success"].Text != "100.0%" || got["action_success"].Den != 1 {
		t.Errorf("assistant b: handoff %+v, success %+v", got["handoff"], got["action_success"])
	}
	byAction := h.report(metrics.Filter{From: day, To: day.AddDate(0, 0, 1), Action: "resend_receipt"}, now)
	if got := results(byAction)["action_success"]; got.Den != 1 {
		t.Errorf("action filter: %+v", got)
	}
	byIntent := h.report(metrics.Filter{From: day, To: day.AddDate(0, 0, 1), Intent: "ambiguous"}, now)
	if got := results(byIntent)["clarification"]; got.Text != "100.0%" {
		t.Errorf("intent filter: %+v", got)
	}
}

// TestWeekOverWeek compares the last seven days of the period with the
// seven before, and draws one trend point per day.
func TestWeekOverWeek(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	h.inv(inv{state: "completed", autoApproved: true, created: day.Add(9 * time.Hour)})
	h.inv(inv{state: "failed", autoApproved: true, created: day.AddDate(0, 0, -8).Add(9 * time.Hour)})
	h.inv(inv{state: "completed", autoApproved: true, created: day.AddDate(0, 0, -9).Add(9 * time.Hour)})
	rep := h.report(metrics.Filter{From: day.AddDate(0, 0, -13), To: day.AddDate(0, 0, 1)}, day)
	r := rep.Results[1]
	if r.ID != "action_success" || r.Format(r.ThisWeek) != "100.0%" || r.Format(r.LastWeek) != "50.0%" || r.Format(r.Value) != "66.7%" {
		t.Errorf("%s: this week %q, last week %q, period %q", r.ID, r.Format(r.ThisWeek), r.Format(r.LastWeek), r.Format(r.Value))
	}
	if len(r.Trend) != 14 {
		t.Fatalf("%d trend points, want 14", len(r.Trend))
	}
	var withData int
	for _, p := range r.Trend {
		if p.Value.HasData {
			withData++
		}
	}
	if withData != 3 {
		t.Errorf("%d days with data, want 3", withData)
	}
}

// TestIncrementalRefresh: a refresh recomputes only the days its new
// events touched, and a changed invocation changes its day's numbers.
func TestIncrementalRefresh(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	id := h.inv(inv{state: "awaiting_approval"})
	h.inv(inv{state: "completed", autoApproved: true, created: day.AddDate(0, 0, -3)})
	if got := results(h.report(oneDay(), day))["action_success"].Text; got != "no data" {
		t.Fatalf("open proposal: %q", got)
	}
	h.exec(`UPDATE invocations SET state = 'failed', finished_at = $2 WHERE id = $1`, id, day.Add(12*time.Hour))
	h.exec(`INSERT INTO events (at, actor_kind, actor_id, action, invocation_id) VALUES ($1, 'system', 'countersign', 'invocation.failed', $2)`,
		day.Add(12*time.Hour), id)
	rep, err := h.st.RefreshMetrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.InvocationDays != 2 { // the lookback re-reads both proposals' events
		t.Errorf("refresh touched %d days", rep.InvocationDays)
	}
	if got := results(h.report(oneDay(), day))["action_success"]; got.Text != "0.0%" || !got.Warn {
		t.Errorf("after the failure: %+v", got)
	}
	again, err := h.st.RefreshMetrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if again.InvocationDays != 0 || again.ConversationDays != 0 {
		t.Errorf("a refresh with nothing new recomputed %+v", again)
	}
}

// TestPercentileWithinFollowsTheData: two days whose 9-in-10 times fall in
// the same bucket (so Percentile gives both its upper edge, and a line
// through them is flat) are told apart within the bucket, between its
// edges; the open last bucket gives its lower edge.
func TestPercentileWithinFollowsTheData(t *testing.T) {
	// Buckets: [0,1m) [1m,5m) [5m,15m) …; ten values each day.
	early := []int64{0, 8, 2} // the 9th value is the 1st of 2 in [5m,15m)
	late := []int64{0, 9, 1}  // the 9th value is the 9th of 9 in [1m,5m)
	lateAll := []int64{0, 0, 10}
	if metrics.Percentile(early, 0.9) != metrics.Percentile(lateAll, 0.9) {
		t.Fatalf("the buckets differ: %v, %v", metrics.Percentile(early, 0.9), metrics.Percentile(lateAll, 0.9))
	}
	cases := []struct {
		name string
		hist []int64
		want float64
	}{
		{"1st of 2 in [5m,15m)", early, 300 + 600.0/2},
		{"9th of 10 in [5m,15m)", lateAll, 300 + 600*0.9},
		{"9th of 9 in [1m,5m)", late, 300},
		{"empty", nil, 0},
		{"open last bucket", append(make([]int64, len(store.BucketEdges)), 5), store.BucketEdges[len(store.BucketEdges)-1]},
	}
	for _, c := range cases {
		if got := metrics.PercentileWithin(c.hist, 0.9); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if metrics.PercentileWithin(early, 0.9) >= metrics.PercentileWithin(lateAll, 0.9) {
		t.Errorf("two days in one bucket are not told apart")
	}
}
