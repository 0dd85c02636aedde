package chaos

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/demoshop"
)

// TestEvaluateCatchesEachBrokenInvariant feeds the checker small journals,
// each breaking one invariant (or none), and wants exactly that rule.
func TestEvaluateCatchesEachBrokenInvariant(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	verified := []byte(`{"verified":true}`)
	inv := func(id, state string, stage int16) journalInvocation {
		ji := journalInvocation{ID: id, TaskID: "tsk", Action: "update_product_description", State: state, Key: "cs-" + id, Stage: stage}
		if state == "completed" {
			ji.Verification = verified
		}
		if state == "unverified" {
			ji.Error = []byte(`{"code":"outcome_unknown"}`)
		}
		return ji
	}
	effect := func(id int64, key string) demoshop.LedgerEntry {
		return demoshop.LedgerEntry{ID: id, Kind: "product.updated", Object: "prod_" + key, RequestID: key}
	}
	var seq int64
	ev := func(action, actor, task, invocation string) journalEvent {
		seq++
		e := journalEvent{ID: seq, At: t0.Add(time.Duration(seq) * time.Second), Action: action, ActorKind: actor, Data: []byte(`{}`)}
		if task != "" {
			e.TaskID = &task
		}
		if invocation != "" {
			e.InvocationID = &invocation
		}
		return e
	}
	// sent is the journal of one stage-5 write that went once and completed.
	sent := func(id string) []journalEvent {
		return []journalEvent{ev("invocation.approved", "policy", "tsk", id), ev("permit.granted", "system", "tsk", id),
			ev("dispatch.started", "system", "tsk", id), ev("invocation.completed", "system", "tsk", id)}
	}
	task := journalTask{ID: "tsk", WriteBudget: 2, InflightLimit: 1}
	cases := []struct {
		name string
		j    journal
		ack  acknowledged
		want []string
	}{
		{name: "a write that went once", j: journal{invs: []journalInvocation{inv("a", "completed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a")}, events: sent("a"), tasks: []journalTask{task}}},
		{name: "an effect nobody journaled", j: journal{ledger: []demoshop.LedgerEntry{effect(1, "stray")}},
			want: []string{"effect_without_journal"}},
		{name: "two effects for one key", j: journal{invs: []journalInvocation{inv("a", "completed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a"), effect(2, "cs-a")}, events: sent("a"), tasks: []journalTask{task}},
			want: []string{"duplicate_effect"}},
		{name: "completed without its effect", j: journal{invs: []journalInvocation{inv("a", "completed", 5)},
			events: sent("a"), tasks: []journalTask{task}}, want: []string{"completed_without_effect"}},
		{name: "an effect for a failed write", j: journal{invs: []journalInvocation{inv("a", "failed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a")}, events: sent("a"), tasks: []journalTask{task}},
			want: []string{"effect_for_failed"}},
		{name: "a failed cancellation its adapter undid", j: journal{invs: []journalInvocation{inv("a", "failed", 5)},
			ledger: []demoshop.LedgerEntry{
				{ID: 1, Kind: demoshop.KindSubscriptionCancelled, Object: "sub_1", RequestID: "cs-a", Data: []byte(`{"charged_cents":0}`)},
				{ID: 2, Kind: demoshop.KindSubscriptionReinstated, Object: "sub_1", RequestID: "cs-a", Data: []byte(`{}`)}},
			events: sent("a"), tasks: []journalTask{task}}},
		{name: "a failed cancellation undone but its charge kept", j: journal{invs: []journalInvocation{inv("a", "failed", 5)},
			ledger: []demoshop.LedgerEntry{
				{ID: 1, Kind: demoshop.KindSubscriptionCancelled, Object: "sub_1", RequestID: "cs-a", Data: []byte(`{"charged_cents":2400}`)},
				{ID: 2, Kind: demoshop.KindSubscriptionReinstated, Object: "sub_1", RequestID: "cs-a", Data: []byte(`{}`)}},
			events: sent("a"), tasks: []journalTask{task}},
			want: []string{"effect_for_failed"}},
		{name: "a reinstatement of another object undoes nothing", j: journal{invs: []journalInvocation{inv("a", "failed", 5)},
			ledger: []demoshop.LedgerEntry{
				{ID: 1, Kind: demoshop.KindSubscriptionCancelled, Object: "sub_1", RequestID: "cs-a", Data: []byte(`{}`)},
				{ID: 2, Kind: demoshop.KindSubscriptionReinstated, Object: "sub_2", RequestID: "cs-a", Data: []byte(`{}`)}},
			events: sent("a"), tasks: []journalTask{task}},
			want: []string{"effect_for_failed"}},
		{name: "an effect sent without the lease check", j: journal{invs: []journalInvocation{inv("a", "completed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a")}, tasks: []journalTask{task}, events: []journalEvent{
				ev("invocation.approved", "policy", "tsk", "a"), ev("permit.granted", "system", "tsk", "a"), ev("invocation.completed", "system", "tsk", "a")}},
			want: []string{"effect_without_send"}},
		{name: "two in flight with a limit of one", j: journal{invs: []journalInvocation{inv("a", "completed", 5), inv("b", "completed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a"), effect(2, "cs-b")}, tasks: []journalTask{task}, events: []journalEvent{
				ev("invocation.approved", "policy", "tsk", "a"), ev("invocation.approved", "policy", "tsk", "b"),
				ev("permit.granted", "system", "tsk", "a"), ev("permit.granted", "system", "tsk", "b"),
				ev("dispatch.started", "system", "tsk", "a"), ev("dispatch.started", "system", "tsk", "b"),
				ev("invocation.completed", "system", "tsk", "a"), ev("invocation.completed", "system", "tsk", "b")}},
			want: []string{"over_inflight_limit"}},
		{name: "a permit after the pause", j: journal{invs: []journalInvocation{inv("a", "completed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a")}, tasks: []journalTask{task},
			events: append([]journalEvent{ev("task.paused", "assistant", "tsk", "")}, sent("a")...)},
			want: []string{"permit_after_paused"}},
		{name: "a permit under the global stop", j: journal{invs: []journalInvocation{inv("a", "completed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a")}, tasks: []journalTask{task},
			events: append([]journalEvent{ev("dispatch.stopped_globally", "user", "", "")}, sent("a")...)},
			want: []string{"permit_after_global_stop"}},
		{name: "a stage-4 write nobody confirmed", j: journal{invs: []journalInvocation{inv("a", "completed", 4)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a")}, events: sent("a"), tasks: []journalTask{task}},
			want: []string{"permit_without_approval"}},
		{name: "an acknowledged approval the journal lost", j: journal{invs: []journalInvocation{inv("a", "awaiting_approval", 3)}},
			ack: acknowledged{invocations: map[string]string{"a": "approved"}}, want: []string{"acknowledged_approval_lost"}},
		{name: "an acknowledged pause the journal lost", j: journal{tasks: []journalTask{task}},
			ack: acknowledged{controls: map[string][]string{"tsk": {"pause"}}}, want: []string{"acknowledged_pause_lost"}},
		{name: "unverified with no evidence", j: journal{invs: []journalInvocation{{ID: "a", TaskID: "tsk", State: "unverified", Key: "cs-a"}}},
			want: []string{"unverified_without_evidence"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c Counts
			var got []string
			for _, f := range evaluate(tc.j, tc.ack, nil, &c) {
				if !slices.Contains(got, f.Rule) {
					got = append(got, f.Rule)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules broken (-want +got):\n%s", diff)
			}
		})
	}
}
