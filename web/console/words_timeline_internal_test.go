package console

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"countersign/internal/controlplane"
	"countersign/internal/locale/pseudotest"
)

// timelineEvents are the timeline's events in every case eventSentence
// and its helpers tell apart, by name: each action bare and with all the
// data it can record, about a named request and about "it", and the
// variants of approvals, refusals, factors and languages.
func timelineEvents() map[string]func() (controlplane.Event, string) {
	full := map[string]any{
		"summary": "Refund it all.", "reason": "Out of stock.", "owner_name": "Ada", "actor_name": "Bot",
		"locale": "fr", "locale_from": "header", "not_dispatched": []any{"a"}, controlplane.DataWithdrawnIDs: []any{"b", "c"},
		"reference": "re_123456", "short_reference": "123456", "system": "shop", "message": "Too late.", "to": "completed",
		"target": "order 7", "target_id": "ord_7", "from": "Bot", "kind": "passkey", "name": "Work laptop", "user_name": "Grace",
		"shop": "Demo shop", "blocked": true, "action": "shop/issue_refund", "why": "The amount is above the limit.",
		"identified_by": map[string]any{"method": "password", "step_up": map[string]any{}},
		"quote_before": map[string]any{"title": "Refund $12.50", "amount_cents": 1250, "currency": "USD",
			"lines": []any{map[string]any{"label": "Amount", "to": "$12.50"}, map[string]any{"label": "Reason", "to": "Damaged"}}},
		"quote_after": map[string]any{"title": "Refund $20.00", "amount_cents": 2000, "currency": "USD",
			"lines": []any{map[string]any{"label": "Amount", "to": "$20.00"}, map[string]any{"label": "Reason", "to": "Not as described"}}},
	}
	with := func(extra map[string]any, drop ...string) map[string]any {
		m := map[string]any{}
		for k, v := range full {
			m[k] = v
		}
		for _, k := range drop {
			delete(m, k)
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	out := map[string]func() (controlplane.Event, string){}
	for _, k := range controlplane.EventActions {
		for _, subject := range []string{"Refund $12.50", "it", ""} {
			for name, data := range map[string]map[string]any{"bare": {}, "full": full} {
				out[string(k)+" "+name+" about "+subject] = func() (controlplane.Event, string) {
					return controlplane.Event{Action: k, ActorKind: controlplane.ActorUser, InvocationID: "inv_1", Data: data}, subject
				}
			}
		}
	}
	variants := map[string]controlplane.Event{
		"approved by policy":               {Action: controlplane.EventInvocationApproved, ActorKind: controlplane.ActorPolicy, Data: map[string]any{}},
		"approved by policy with owner":    {Action: controlplane.EventInvocationApproved, ActorKind: controlplane.ActorPolicy, Data: full},
		"completed, reference only":        {Action: controlplane.EventInvocationCompleted, Data: with(nil, "short_reference")},
		"completed, same short":            {Action: controlplane.EventInvocationCompleted, Data: with(map[string]any{"short_reference": "re_123456"})},
		"not dispatched, withdrawn":        {Action: controlplane.EventInvocationNotDispatched, Data: with(map[string]any{controlplane.DataWithdrawn: true})},
		"not dispatched, a reason":         {Action: controlplane.EventInvocationNotDispatched, Data: map[string]any{"reason": "task_paused"}},
		"awaiting approval, old reason":    {Action: controlplane.EventInvocationAwaitingApproval, Data: map[string]any{"reason": "stage approve"}},
		"awaiting approval, a sentence":    {Action: controlplane.EventInvocationAwaitingApproval, Data: map[string]any{"reason": "The amount is above $50."}},
		"sent back, a question":            {Action: controlplane.EventInvocationSentBack, Data: map[string]any{"reason": "question: Which order?"}},
		"declined, no reason":              {Action: controlplane.EventInvocationDeclined, Data: with(nil, "reason")},
		"confirmed, no source":             {Action: controlplane.EventInvocationConfirmed, Data: map[string]any{"locale": "ar"}},
		"confirmed, unknown tag":           {Action: controlplane.EventInvocationConfirmed, Data: map[string]any{"locale": "xx-!!", "locale_from": "business"}},
		"refused, not blocked":             {Action: controlplane.EventProposalRefused, ActorKind: controlplane.ActorAssistant, Data: with(map[string]any{"blocked": false})},
		"refused, no message":              {Action: controlplane.EventProposalRefused, ActorKind: controlplane.ActorAssistant, Data: with(nil, "message")},
		"refused, no target":               {Action: controlplane.EventProposalRefused, ActorKind: controlplane.ActorAssistant, Data: with(nil, "target", "target_id")},
		"refused, target id only":          {Action: controlplane.EventProposalRefused, ActorKind: controlplane.ActorAssistant, Data: with(nil, "target")},
		"blocked after refusal":            {Action: controlplane.EventProposalBlockedAfterRefusal, ActorKind: controlplane.ActorAssistant, Data: full},
		"blocked after refusal, no target": {Action: controlplane.EventProposalBlockedAfterRefusal, ActorKind: controlplane.ActorAssistant, Data: with(nil, "target", "target_id")},
		"edited, no quotes":                {Action: controlplane.EventInvocationEdited, Data: with(nil, "quote_before")},
		"edited, one line":                 {Action: controlplane.EventInvocationEdited, Data: with(map[string]any{"quote_after": map[string]any{"title": "Refund", "amount_cents": 1250, "currency": "USD", "lines": []any{map[string]any{"label": "Reason", "to": "Other"}}}})},
		"proposed, untitled":               {Action: controlplane.EventInvocationProposed, Data: map[string]any{"action": "shop/issue_refund", "target": "order 7"}},
		"summary without stop":             {Action: controlplane.EventInvocationSummaryDisagreed, Data: map[string]any{"summary": "Refund it all"}},
		"paused, two not sent":             {Action: controlplane.EventTaskPaused, Data: with(map[string]any{"not_dispatched": []any{"a", "b"}})},
		"cancelled, one withdrawn":         {Action: controlplane.EventTaskCancelled, Data: with(map[string]any{controlplane.DataWithdrawnIDs: []any{"b"}}, "not_dispatched")},
		"first approval, no passkey":       {Action: controlplane.EventInvocationFirstApproval, Data: map[string]any{}},
		"factor added totp":                {Action: controlplane.EventFactorAdded, Data: map[string]any{"kind": "totp"}},
		"audit checkpoint of a size":       {Action: controlplane.EventAuditCheckpointSigned, Data: map[string]any{"size": float64(42)}},
		"audit export filtered":            {Action: controlplane.EventAuditExported, Data: map[string]any{"from": "2026-11-01", "to": "2026-12-01", "filter": map[string]any{"system": "shop", "person": "12"}}},
		"factor added passkey":             {Action: controlplane.EventFactorAdded, Data: map[string]any{"kind": "passkey"}},
		"factor added recovery":            {Action: controlplane.EventFactorAdded, Data: map[string]any{"kind": "recovery_codes"}},
		"factor removed totp":              {Action: controlplane.EventFactorRemoved, Data: map[string]any{"kind": "totp"}},
		"factor removed recovery":          {Action: controlplane.EventFactorRemoved, Data: map[string]any{"kind": "recovery_codes"}},
		"factor removed other":             {Action: controlplane.EventFactorRemoved, Data: map[string]any{"kind": "webauthn2"}},
		"customer passkey removed, bare":   {Action: controlplane.EventCustomerPasskeyRemoved, Data: map[string]any{}},
		"an unknown event":                 {Action: "invocation.teleported", Data: map[string]any{}},
	}
	for name, e := range variants {
		for _, subject := range []string{"Refund $12.50", "it"} {
			out[name+" about "+subject] = func() (controlplane.Event, string) { e.InvocationID = "inv_1"; return e, subject }
		}
	}
	out["an unknown task event"] = func() (controlplane.Event, string) {
		return controlplane.Event{Action: "task.teleported", Data: map[string]any{}}, ""
	}
	return out
}

// timelineSentences are what eventSentence writes of each timeline event.
func timelineSentences() map[string]string {
	out := map[string]string{}
	for name, ev := range timelineEvents() {
		e, subject := ev()
		out[name] = eventSentence(e, subject)
	}
	out["untitled request"] = timelineRow(controlplane.Event{Action: controlplane.EventInvocationExpired, InvocationID: "inv_9", Data: map[string]any{}}, nil, "").Sentence
	out["policy version"] = policyVersionWords(3)
	rows := timeline([]controlplane.Event{
		{Action: controlplane.EventInvocationProposed, InvocationID: "inv_2", Data: map[string]any{"action": "shop/issue_refund", "target": "order 7"}},
		{Action: controlplane.EventInvocationExpired, InvocationID: "inv_2", Data: map[string]any{}},
		{Action: controlplane.EventTaskClosed, Data: map[string]any{}},
		{Action: controlplane.EventInvocationExpired, InvocationID: "inv_2", Data: map[string]any{}},
	}, nil)
	for i, r := range rows {
		out["a timeline's row "+string(rune('a'+i))] = r.Sentence
	}
	return out
}

// oneMessage says whether s is one marked catalogue message as a whole:
// its first ⟦ closes at its last ⟧, so nothing was written around it.
func oneMessage(s string) bool {
	if !strings.HasPrefix(s, "⟦") || !strings.HasSuffix(s, "⟧") {
		return false
	}
	depth := 0
	for i, r := range s {
		switch r {
		case '⟦':
			depth++
		case '⟧':
			depth--
			if depth == 0 && i+len("⟧") != len(s) {
				return false
			}
		}
	}
	return depth == 0
}

// TestTheTimelinesSentencesComeFromTheCatalogue: every sentence of a
// task's timeline, in each case it tells apart, is one console.timeline.*
// message (its optional clauses and the request's name its parameters),
// so an installation's override shows whole: an event the console does
// not know, or one never on a task's timeline (withoutSentence), too,
// though it is named by its code.
func TestTheTimelinesSentencesComeFromTheCatalogue(t *testing.T) {
	pseudotest.InstallMarkedConsole(t)
	for name, got := range timelineSentences() {
		if !oneMessage(got) {
			t.Errorf("%s: %q is not one catalogue message", name, got)
		}
	}
}

// TestTheTimelinesSentencesReadAsBefore: from the catalogue, each sentence
// reads exactly as eventSentence wrote it in code before
// (testdata/timeline_sentences.json was written by the code before the
// conversion). The one change: an event about a request but given no
// subject (which a timeline never does: timelineRow names every request)
// now says "it" where it said nothing ("Nobody decided on before the
// deadline").
func TestTheTimelinesSentencesReadAsBefore(t *testing.T) {
	raw, err := os.ReadFile("testdata/timeline_sentences.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	got := timelineSentences()
	if len(got) != len(want) {
		t.Errorf("%d cases, want %d", len(got), len(want))
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
}
