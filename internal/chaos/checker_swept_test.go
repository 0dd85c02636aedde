package chaos

import (
	"testing"

	"countersign/internal/controlplane"
)

// TestEvaluateCountsWhatTheConsolesSettledThemselves: a reconciled event
// the sweep recorded counts as swept, a person's does not; an unverified
// invocation without an effect is noted with its system, so a campaign's
// history tells an authoritative record's apart.
func TestEvaluateCountsWhatTheConsolesSettledThemselves(t *testing.T) {
	a, b := "a", "b"
	j := journal{
		invs: []journalInvocation{{ID: a, TaskID: "tsk", State: "completed", Key: "cs-a", Verification: []byte(`{"verified":true}`)},
			{ID: b, TaskID: "tsk", System: systemWarehouse, Action: "update_product_description", State: "unverified", Key: "cs-b", Error: []byte(`{"code":"outcome_unknown"}`)}},
		events: []journalEvent{{ID: 1, Action: controlplane.EventInvocationReconciled, ActorKind: "system", InvocationID: &a, Data: []byte(`{"by":"sweep","to":"completed"}`)},
			{ID: 2, Action: controlplane.EventInvocationReconciled, ActorKind: "user", InvocationID: &b, Data: []byte(`{"to":"completed"}`)}},
	}
	var c Counts
	evaluate(j, acknowledged{}, nil, &c)
	if c.Swept != 1 {
		t.Errorf("swept %d, want 1", c.Swept)
	}
	if len(c.Notes) != 1 || c.Notes[0] != `b (update_product_description of warehouse) stays unverified without an effect; its error: {"code":"outcome_unknown"}` {
		t.Errorf("notes %q", c.Notes)
	}
}
