package console

import (
	"testing"

	"countersign/internal/controlplane"
)

// TestACustomersDecisionSaysTheLanguageTheyRead: the timeline's sentence
// of a customer's confirmation, decline or stop names the language the
// customer read the page in and why, from the event's own data; a staff
// decision, which records none, says nothing of it.
func TestACustomersDecisionSaysTheLanguageTheyRead(t *testing.T) {
	cases := []struct {
		action controlplane.EventAction
		data   map[string]any
		want   string
	}{
		{controlplane.EventInvocationConfirmed, map[string]any{"locale": "fr", "locale_from": "header"},
			"confirmed “Refund $12.50”, reading the page in French (their browser's language)."},
		{controlplane.EventInvocationDeclined, map[string]any{"locale": "ar", "locale_from": "business", "reason": "Too late"},
			"declined “Refund $12.50”, reading the page in Arabic (as the business set it for this customer): Too late."},
		{controlplane.EventInvocationConfirmed, map[string]any{"locale": "de", "locale_from": "switch"},
			"confirmed “Refund $12.50”, reading the page in German (chosen on the page's language switch)."},
		{controlplane.EventInvocationConfirmed, map[string]any{"locale": "es", "locale_from": "default"},
			"confirmed “Refund $12.50”, reading the page in Spanish (the system's default language)."},
		{controlplane.EventTaskPaused, map[string]any{"locale": "en", "locale_from": "fallback"},
			"paused the task, reading the page in English (no language named: English): no request of it gets a permit until it is resumed."},
		{controlplane.EventInvocationConfirmed, map[string]any{}, "confirmed “Refund $12.50”."},
	}
	for _, tc := range cases {
		e := controlplane.Event{Action: tc.action, InvocationID: "inv_1", ActorKind: controlplane.ActorCustomer, Data: tc.data}
		if got := eventSentence(e, "Refund $12.50"); got != tc.want {
			t.Errorf("%s %v:\n got %q\nwant %q", tc.action, tc.data, got, tc.want)
		}
	}
}
