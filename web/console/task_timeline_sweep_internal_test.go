package console

import (
	"testing"

	"countersign/internal/controlplane"
)

// TestTheAutomaticCheckSaysWhatItFound: a request the reconciler's sweep
// settled or handed over says so on the timeline, from the event's own
// data — by the automatic check, on which look, to what, with the
// system's evidence — and a person's reconcile keeps its own words.
func TestTheAutomaticCheckSaysWhatItFound(t *testing.T) {
	sweep := func(action controlplane.EventAction, data map[string]any) controlplane.Event {
		data[controlplane.DataBy] = controlplane.BySweep
		return controlplane.Event{Action: action, ActorKind: controlplane.ActorSystem, InvocationID: "inv_1", Data: data}
	}
	cases := []struct {
		name string
		e    controlplane.Event
		want string
	}{
		{"not applied", sweep(controlplane.EventInvocationReconciled, map[string]any{"to": "failed", "code": "not_applied", "attempt": 3.0,
			"evidence": "Harbour & Pine has no effect under this call's key in its authoritative record, 1m45s after the call was begun: it was not applied."}),
			"The automatic check settled “Refund $12.50” from the system's evidence (look 3): it is now failed, not applied — nothing changed, and nothing was re-sent. " +
				"Evidence: Harbour & Pine has no effect under this call's key in its authoritative record, 1m45s after the call was begun: it was not applied."},
		{"found and read back", sweep(controlplane.EventInvocationReconciled, map[string]any{"to": "completed", "attempt": 1.0,
			"evidence": "Refund re_1 of $12.50 found on order ord_1."}),
			"The automatic check settled “Refund $12.50” from the system's evidence (look 1): it is now completed. Evidence: Refund re_1 of $12.50 found on order ord_1."},
		{"handed to a person", sweep(controlplane.EventInvocationReconcileInconclusive, map[string]any{"attempt": 10.0, "handed_to_person": true}),
			"The automatic check looked “Refund $12.50” up 10 times without settling it, so it stays “Result needs checking” for a person to check with the system's owner."},
		{"handed over, the system unreadable", sweep(controlplane.EventInvocationReconcileInconclusive, map[string]any{"attempt": 10.0,
			"lookup_error": "The shop did not answer."}),
			"The automatic check looked “Refund $12.50” up 10 times without settling it, so it stays “Result needs checking” for a person to check with the system's owner; " +
				"its last look could not read the system: The shop did not answer."},
		{"a person's reconcile", controlplane.Event{Action: controlplane.EventInvocationReconciled, ActorKind: controlplane.ActorUser, InvocationID: "inv_1",
			Data: map[string]any{"to": "completed"}},
			"reconciled “Refund $12.50” from the system's evidence: it is now completed."},
	}
	for _, tc := range cases {
		row := timelineRow(tc.e, map[string]string{"inv_1": "Refund $12.50"}, "")
		if row.Sentence != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, row.Sentence, tc.want)
		}
		if tc.e.ActorKind == controlplane.ActorSystem && row.Actor != "" {
			t.Errorf("%s: the row names %q before the automatic check's sentence", tc.name, row.Actor)
		}
	}
}
