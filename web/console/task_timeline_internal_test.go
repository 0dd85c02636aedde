package console

import (
	"strings"
	"testing"

	"countersign/internal/controlplane"
)

// withoutSentence lists the event actions the timeline words by their name
// alone, and why; every other one of controlplane.EventActions has a
// sentence of its own.
var withoutSentence = map[controlplane.EventAction]string{
	controlplane.EventPolicyChanged:            "recorded with no task, so no task's timeline shows it",
	controlplane.EventAssistantGrantsChanged:   "recorded by internal/assistants with no task",
	controlplane.EventWebhookTest:              "recorded by internal/webhooks with no task",
	controlplane.EventFactorRequirementChanged: "recorded by internal/factors with no task",
	controlplane.EventOAuthConsented:           "recorded by internal/authserver with no task",
	controlplane.EventOAuthClientApproved:      "recorded by internal/authserver with no task",
	controlplane.EventOAuthClientRevoked:       "recorded by internal/authserver with no task",
	controlplane.EventOAuthRevoked:             "recorded by internal/authserver with no task",
	controlplane.EventOAuthSettingChanged:      "recorded by internal/authserver with no task",
	controlplane.EventHandoffResolved:          "no sentence yet: the timeline says \"Handoff resolved.\"",
	controlplane.EventHandoffGivenBack:         "no sentence yet: the timeline says \"Handoff given back.\"",
}

// TestEveryRecordedEventHasASentenceFromItsOwnData checks each kind of
// event the control plane records has its own sentence (not the fallback
// that only repeats the kind's name), and that the sentence is made from
// the event alone: eventSentence is given nothing but the event and the
// name earlier events gave its request, so an invocation's current quote
// cannot reach it.
func TestEveryRecordedEventHasASentenceFromItsOwnData(t *testing.T) {
	for _, k := range controlplane.EventActions {
		if _, ok := withoutSentence[k]; ok {
			continue
		}
		e := controlplane.Event{Action: k, InvocationID: "inv_1", Data: map[string]any{}}
		got := eventSentence(e, "Refund $12.50")
		if got == humanize(string(k))+" “Refund $12.50”." || got == "" {
			t.Errorf("%s has no sentence of its own: %q", k, got)
		}
	}
}

// TestRefusalSaysBlockedOnlyWhenTheEventRecordedABlock covers old events
// too: one without the block flag does not claim a block.
func TestRefusalSaysBlockedOnlyWhenTheEventRecordedABlock(t *testing.T) {
	base := map[string]any{"system": "shop", "action": "issue_refund", "target_id": "ord_1", "actor_name": "demo-assistant"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name    string
		data    map[string]any
		blocked bool
	}{
		{"refusal with a block", with(map[string]any{"blocked": true, "policy": true, "message": "Outside the refund window."}), true},
		{"refusal without a block", with(map[string]any{"blocked": false, "message": "Too much."}), false},
		{"an old refusal that recorded no block flag", with(map[string]any{"policy": true}), false},
	}
	for _, tc := range cases {
		e := controlplane.Event{Action: "proposal.refused", ActorKind: controlplane.ActorAssistant, Data: tc.data}
		got := eventSentence(e, "")
		if strings.Contains(got, "blocked") != tc.blocked {
			t.Errorf("%s: %q", tc.name, got)
		}
		if !strings.HasPrefix(got, "The shop refused a proposal by demo-assistant (assistant)") {
			t.Errorf("%s: the refusal is not the shop's: %q", tc.name, got)
		}
		if row := timelineRow(e, nil, ""); row.Actor != "" {
			t.Errorf("%s: the row names %q as the one who refused", tc.name, row.Actor)
		}
	}
}
