package chaos

import (
	"testing"

	"countersign/internal/controlplane"
)

// TestEvaluateCountsWhatTheConsolesSettledThemselves: a reconciled event
// the sweep recorded counts as swept, a person's does not; an unverified
// invocation without an effect is noted with its system, so a campaign's
// history tells an authoritative record's apart; each system is counted
// on its own, and a sweep that settled a call as failed (an authoritative
// record holding no effect under its key) as swept not applied.
func TestEvaluateCountsWhatTheConsolesSettledThemselves(t *testing.T) {
	a, b, g := "a", "b", "g"
	j := journal{
		invs: []journalInvocation{{ID: a, TaskID: "tsk", State: "completed", Key: "cs-a", Verification: []byte(`{"verified":true}`)},
			{ID: b, TaskID: "tsk", System: systemWarehouse, Action: "update_product_description", State: "unverified", Key: "cs-b", Error: []byte(`{"code":"outcome_unknown"}`)},
			{ID: g, TaskID: "tsk", System: systemGraphQL, Action: actionGQLRefund, State: "failed", Key: "cs-g", Error: []byte(`{"code":"not_applied"}`)}},
		events: []journalEvent{{ID: 1, Action: controlplane.EventInvocationReconciled, ActorKind: "system", InvocationID: &a, Data: []byte(`{"by":"sweep","to":"completed"}`)},
			{ID: 2, Action: controlplane.EventInvocationReconciled, ActorKind: "user", InvocationID: &b, Data: []byte(`{"to":"completed"}`)},
			{ID: 3, Action: controlplane.EventInvocationReconciled, ActorKind: "system", InvocationID: &g, Data: []byte(`{"by":"sweep","to":"failed"}`)}},
	}
	var c Counts
	evaluate(j, acknowledged{}, nil, &c)
	if c.Swept != 2 {
		t.Errorf("swept %d, want 2", c.Swept)
	}
	if s := c.Systems[systemShop]; s == nil || s.Swept != 1 || s.SweptNotApplied != 0 {
		t.Errorf("the shop's counts %+v, want 1 swept, none as not applied", s)
	}
	if s := c.Systems[systemWarehouse]; s == nil || s.Swept != 0 || s.WithoutEffect != 1 {
		t.Errorf("the warehouse's counts %+v, want 1 still unverified without an effect", s)
	}
	if s := c.Systems[systemGraphQL]; s == nil || s.Swept != 1 || s.SweptNotApplied != 1 {
		t.Errorf("the GraphQL shop's counts %+v, want 1 swept as not applied", s)
	}
	if len(c.Notes) != 1 || c.Notes[0] != `b (update_product_description of warehouse) stays unverified without an effect; its error: {"code":"outcome_unknown"}` {
		t.Errorf("notes %q", c.Notes)
	}
}
