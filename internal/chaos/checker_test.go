package chaos

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/controlplane"
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
	ev := func(action controlplane.EventAction, actor, task, invocation string) journalEvent {
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
		return []journalEvent{ev(controlplane.EventInvocationApproved, "policy", "tsk", id), ev(controlplane.EventPermitGranted, "system", "tsk", id),
			ev(controlplane.EventDispatchStarted, "system", "tsk", id), ev(controlplane.EventInvocationCompleted, "system", "tsk", id)}
	}
	task := journalTask{ID: "tsk", WriteBudget: 2, InflightLimit: 1}
	// by is an event by a console user.
	by := func(action controlplane.EventAction, user, invocation string) journalEvent {
		e := ev(action, "user", "tsk", invocation)
		e.ActorID = user
		return e
	}
	// gqlRefund and gqlEffect are a stage-5 refund in the GraphQL shop and
	// a refund its effects query answers.
	gqlRefund := func(id string) journalInvocation {
		ji := inv(id, "completed", 5)
		ji.System, ji.Action = systemGraphQL, actionGQLRefund
		return ji
	}
	gqlEffect := func(id int64, key, order string) demoshop.LedgerEntry {
		return demoshop.LedgerEntry{ID: id, Kind: "refund.created", Object: order, RequestID: key}
	}
	amount, threshold := int64(9000), int64(secondApproverAbove)
	refund := func(id string) journalInvocation {
		ji := inv(id, "completed", 3)
		ji.Action, ji.AmountCents, ji.TargetID = actionRefund, &amount, "ord_"+id
		return ji
	}
	refundEffect := func(id int64, key, order string) demoshop.LedgerEntry {
		return demoshop.LedgerEntry{ID: id, Kind: demoshop.KindRefundCreated, Object: order, RequestID: key}
	}
	// refunded is the journal of a refund approved by first then second.
	refunded := func(id, first, second string) []journalEvent {
		return []journalEvent{by(controlplane.EventInvocationFirstApproval, first, id), by(controlplane.EventInvocationApproved, second, id),
			ev(controlplane.EventPermitGranted, "system", "tsk", id), ev(controlplane.EventDispatchStarted, "system", "tsk", id), ev(controlplane.EventInvocationCompleted, "system", "tsk", id)}
	}
	// reversal is a completed reinstatement reversing original.
	reversal := func(id, original string) journalInvocation {
		ji := inv(id, "completed", 3)
		ji.Action, ji.CompensatesID = actionReinstate, &original
		return ji
	}
	reversed := func(id string) []journalEvent {
		return []journalEvent{by(controlplane.EventInvocationApproved, "2", id), ev(controlplane.EventPermitGranted, "system", "tsk", id),
			ev(controlplane.EventDispatchStarted, "system", "tsk", id), ev(controlplane.EventInvocationCompleted, "system", "tsk", id)}
	}
	reinstated := func(id int64, key string) demoshop.LedgerEntry {
		return demoshop.LedgerEntry{ID: id, Kind: demoshop.KindSubscriptionReinstated, Object: "sub_1", RequestID: key, Data: []byte(`{}`)}
	}
	cancelled := demoshop.LedgerEntry{ID: 1, Kind: demoshop.KindSubscriptionCancelled, Object: "sub_1", RequestID: "cs-a", Data: []byte(`{}`)}
	// hooked is a journal of one completed write with the receiver on.
	// Its outcome events are the approval (event 1 in got) and the
	// completion (event 4).
	hooked := func(got ...received) journal {
		events := sent("a")
		ids := map[int64]int64{1: events[0].ID, 4: events[3].ID}
		for i := range got {
			got[i].EventID = ids[got[i].EventID]
		}
		return journal{invs: []journalInvocation{inv("a", "completed", 5)}, ledger: []demoshop.LedgerEntry{effect(1, "cs-a")},
			events: events, tasks: []journalTask{task}, hooks: true, received: got, checkedAt: t0,
			deliveries: []journalDelivery{{ID: 1, EventID: ids[1], State: "delivered"}, {ID: 2, EventID: ids[4], State: "delivered"}}}
	}
	waiting := func(ji journalInvocation) journalInvocation {
		ji.State, ji.Verification = "awaiting_approval", nil
		return ji
	}
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
				ev(controlplane.EventInvocationApproved, "policy", "tsk", "a"), ev(controlplane.EventPermitGranted, "system", "tsk", "a"), ev(controlplane.EventInvocationCompleted, "system", "tsk", "a")}},
			want: []string{"effect_without_send"}},
		{name: "two in flight with a limit of one", j: journal{invs: []journalInvocation{inv("a", "completed", 5), inv("b", "completed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a"), effect(2, "cs-b")}, tasks: []journalTask{task}, events: []journalEvent{
				ev(controlplane.EventInvocationApproved, "policy", "tsk", "a"), ev(controlplane.EventInvocationApproved, "policy", "tsk", "b"),
				ev(controlplane.EventPermitGranted, "system", "tsk", "a"), ev(controlplane.EventPermitGranted, "system", "tsk", "b"),
				ev(controlplane.EventDispatchStarted, "system", "tsk", "a"), ev(controlplane.EventDispatchStarted, "system", "tsk", "b"),
				ev(controlplane.EventInvocationCompleted, "system", "tsk", "a"), ev(controlplane.EventInvocationCompleted, "system", "tsk", "b")}},
			want: []string{"over_inflight_limit"}},
		{name: "a permit after the pause", j: journal{invs: []journalInvocation{inv("a", "completed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a")}, tasks: []journalTask{task},
			events: append([]journalEvent{ev(controlplane.EventTaskPaused, "assistant", "tsk", "")}, sent("a")...)},
			want: []string{"permit_after_paused"}},
		{name: "a permit under the global stop", j: journal{invs: []journalInvocation{inv("a", "completed", 5)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a")}, tasks: []journalTask{task},
			events: append([]journalEvent{ev(controlplane.EventDispatchStoppedGlobally, "user", "", "")}, sent("a")...)},
			want: []string{"permit_after_global_stop"}},
		{name: "a stage-4 write nobody confirmed", j: journal{invs: []journalInvocation{inv("a", "completed", 4)},
			ledger: []demoshop.LedgerEntry{effect(1, "cs-a")}, events: sent("a"), tasks: []journalTask{task}},
			want: []string{"permit_without_approval"}},
		{name: "an acknowledged approval the journal lost", j: journal{invs: []journalInvocation{inv("a", "awaiting_approval", 3)}},
			ack: acknowledged{invocations: map[string]string{"a": "approved"}}, want: []string{"acknowledged_approval_lost"}},
		{name: "an acknowledged pause the journal lost", j: journal{tasks: []journalTask{task}},
			ack: acknowledged{controls: map[string][]string{"tsk": {"pause"}}}, want: []string{"acknowledged_pause_lost"}},
		{name: "a refund two people approved", j: journal{invs: []journalInvocation{refund("a")}, secondAbove: &threshold,
			ledger: []demoshop.LedgerEntry{refundEffect(1, "cs-a", "ord_a")}, events: refunded("a", "1", "2"), tasks: []journalTask{task}}},
		{name: "a refund above the threshold one person approved twice", j: journal{invs: []journalInvocation{refund("a")}, secondAbove: &threshold,
			ledger: []demoshop.LedgerEntry{refundEffect(1, "cs-a", "ord_a")}, events: refunded("a", "1", "1"), tasks: []journalTask{task}},
			want: []string{"refund_without_two_approvers"}},
		{name: "a refund above the threshold sent on one approval", j: journal{invs: []journalInvocation{refund("a")}, secondAbove: &threshold,
			ledger: []demoshop.LedgerEntry{refundEffect(1, "cs-a", "ord_a")}, events: refunded("a", "1", "2")[1:], tasks: []journalTask{task}},
			want: []string{"refund_without_two_approvers"}},
		{name: "an order refunded twice", j: journal{invs: []journalInvocation{refund("a"), refund("b")}, secondAbove: &threshold,
			ledger: []demoshop.LedgerEntry{refundEffect(1, "cs-a", "ord_a"), refundEffect(2, "cs-b", "ord_a")},
			events: append(refunded("a", "1", "2"), refunded("b", "1", "2")...), tasks: []journalTask{{ID: "tsk", WriteBudget: 2, InflightLimit: 2}}},
			want: []string{"refunded_twice"}},
		{name: "an acknowledged first approval the journal lost", j: journal{invs: []journalInvocation{inv("a", "awaiting_approval", 3)}},
			ack: acknowledged{invocations: map[string]string{"a": "first_approved"}}, want: []string{"acknowledged_first_approval_lost"}},
		{name: "a cancellation reversed once", j: journal{invs: []journalInvocation{inv("a", "reversed", 5), reversal("r", "a")},
			ledger: []demoshop.LedgerEntry{cancelled, reinstated(2, "cs-r")}, tasks: []journalTask{task},
			events: append(append(sent("a"), reversed("r")...), ev(controlplane.EventInvocationReversed, "system", "tsk", "a"))}},
		{name: "a cancellation reversed twice", j: journal{invs: []journalInvocation{inv("a", "reversed", 5), reversal("r", "a"), reversal("s", "a")},
			ledger: []demoshop.LedgerEntry{cancelled, reinstated(2, "cs-r"), reinstated(3, "cs-s")}, tasks: []journalTask{{ID: "tsk", WriteBudget: 3, InflightLimit: 1}},
			events: append(append(append(sent("a"), reversed("r")...), reversed("s")...),
				ev(controlplane.EventInvocationReversed, "system", "tsk", "a"), ev(controlplane.EventInvocationReversed, "system", "tsk", "a"))},
			want: []string{"reversed_twice", "two_live_reversals", "reversal_effect_twice"}},
		{name: "a reversal whose effect is in the ledger twice", j: journal{invs: []journalInvocation{inv("a", "reversed", 5), reversal("r", "a")},
			ledger: []demoshop.LedgerEntry{cancelled, reinstated(2, "cs-r"), {ID: 3, Kind: demoshop.KindSubscriptionReinstated, Object: "sub_2", RequestID: "cs-r"}},
			tasks:  []journalTask{task}, events: append(append(sent("a"), reversed("r")...), ev(controlplane.EventInvocationReversed, "system", "tsk", "a"))},
			want: []string{"reversal_effect_twice"}},
		{name: "a second reversal while the first is live", j: journal{invs: []journalInvocation{inv("a", "completed", 5), waiting(reversal("r", "a")),
			waiting(reversal("s", "a"))}, ledger: []demoshop.LedgerEntry{cancelled}, tasks: []journalTask{task}, events: sent("a")},
			ack: acknowledged{reversals: map[string][]string{"a": {"r", "s"}}}, want: []string{"two_live_reversals", "reversal_not_deduplicated"}},
		{name: "an effect in the other system's ledger", j: journal{invs: []journalInvocation{inv("a", "completed", 5)},
			second: []demoshop.LedgerEntry{effect(1, "cs-a")}, events: sent("a"), tasks: []journalTask{task}},
			want: []string{"effect_in_other_system"}},
		{name: "a described system's write that went twice", j: journal{invs: []journalInvocation{{ID: "a", TaskID: "tsk", System: systemWarehouse,
			Action: actionAuto, State: "completed", Key: "cs-a", Stage: 5, Verification: verified}},
			second: []demoshop.LedgerEntry{effect(1, "cs-a"), effect(2, "cs-a")}, events: sent("a"), tasks: []journalTask{task}},
			want: []string{"duplicate_effect"}},
		{name: "a GraphQL shop's refund once under its key", j: journal{invs: []journalInvocation{gqlRefund("a")}, secondName: systemGraphQL,
			second: []demoshop.LedgerEntry{gqlEffect(1, "cs-a", "ord_1")}, events: sent("a"), tasks: []journalTask{task}}},
		{name: "a GraphQL shop's key that refunded twice, on another order", j: journal{invs: []journalInvocation{gqlRefund("a")}, secondName: systemGraphQL,
			second: []demoshop.LedgerEntry{gqlEffect(1, "cs-a", "ord_1"), gqlEffect(2, "cs-a", "ord_2")}, events: sent("a"), tasks: []journalTask{task}},
			want: []string{"duplicate_effect"}},
		{name: "a GraphQL shop's key that refunded one order twice", j: journal{invs: []journalInvocation{gqlRefund("a")}, secondName: systemGraphQL,
			second: []demoshop.LedgerEntry{gqlEffect(1, "cs-a", "ord_1"), gqlEffect(2, "cs-a", "ord_1")}, events: sent("a"), tasks: []journalTask{task}},
			want: []string{"duplicate_effect"}},
		{name: "outcome webhooks delivered, one twice under its id", j: hooked(received{Delivery: "1", EventID: 1, Status: 500},
			received{Delivery: "1", EventID: 1, Status: 200}, received{Delivery: "2", EventID: 4, Status: 200}, received{Delivery: "2", EventID: 4, Status: 200})},
		{name: "an outcome event sent under two delivery ids", j: hooked(received{Delivery: "1", EventID: 1, Status: 200},
			received{Delivery: "2", EventID: 4, Status: 200}, received{Delivery: "3", EventID: 4, Status: 200}),
			want: []string{"webhook_two_delivery_ids"}},
		{name: "an outcome event the receiver never took", j: hooked(received{Delivery: "1", EventID: 1, Status: 200},
			received{Delivery: "2", EventID: 4, Status: 500}), want: []string{"webhook_not_delivered"}},
		{name: "an outcome event never enqueued", j: func() journal {
			j := hooked(received{Delivery: "1", EventID: 1, Status: 200})
			j.deliveries = j.deliveries[:1]
			return j
		}(), want: []string{"webhook_not_delivered"}},
		{name: "outcome events late behind a claim a killed console holds", j: func() journal {
			j := hooked()
			until := t0.Add(time.Minute)
			j.deliveries[0].State, j.deliveries[0].LeaseUntil, j.deliveries[0].InvocationID = "pending", &until, "a"
			j.deliveries[1].State, j.deliveries[1].InvocationID = "pending", "a"
			return j
		}()},
		{name: "a forged webhook", j: hooked(received{Delivery: "1", EventID: 1, Status: 200},
			received{Delivery: "2", EventID: 4, Status: 200, BadSignature: true}), want: []string{"webhook_bad_signature"}},
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
