package console

import (
	"strings"
	"testing"
	"time"

	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale/pseudotest"
	"countersign/internal/webhooks"
	"countersign/web/layout"
)

// consoleRestWords are the words the console's Go code builds from
// console.rest.* messages, each with the English it read before it came
// from the catalogue (written in code, or controlplane's for the API).
func consoleRestWords() map[string][2]string {
	cents := int64(2500)
	at := time.Date(2026, 4, 1, 10, 4, 0, 0, time.UTC)
	today := controlplane.WhatIf{Auto: 5, Approval: 3, Confirmation: 1}
	draft := controlplane.WhatIf{Auto: 2, Approval: 6, Confirmation: 1}
	out := map[string][2]string{
		"stage other":                 {stageLabel(9), "stage 9"},
		"list of two":                 {joinWords([]string{"a", "b"}), "a and b"},
		"list of three":               {joinWords([]string{"a", "b", "c"}), "a, b and c"},
		"what-if route":               {whatIfView(controlplane.Policy{}, today, nil).Rows[1].Route, "An agent approves"},
		"what-if no change":           {signedCount(0), "no change"},
		"what-if summary, none":       {whatIfView(controlplane.Policy{}, today, &today).Summary, "No change: this draft sends the last 30 days' proposals exactly where today's policy sent them."},
		"what-if summary":             {whatIfView(controlplane.Policy{}, today, &draft).Summary, "Against today's policy, 3 more would have gone to an agent for approval and 3 fewer would have run automatically."},
		"step-up every":               {stepUpWords(controlplane.Policy{StepUpEvery: true}), "a fresh passkey for every approval"},
		"step-up above":               {stepUpWords(controlplane.Policy{StepUpAboveCents: &cents}), "a fresh passkey for approvals above $25.00"},
		"no open task":                {openTasksSentence("console.rest.confirm.key.open_tasks_wait", "Ada", 0), "Ada has no open task."},
		"one open task waits":         {openTasksSentence("console.rest.confirm.key.open_tasks_wait", "Ada", 1), "Ada has 1 open task (active or paused): it waits without a caller until it has a new key."},
		"open tasks go on":            {openTasksSentence("console.rest.confirm.key.open_tasks_go_on", "Ada", 2), "Ada has 2 open tasks (active or paused): they go on through its other keys."},
		"open tasks stay":             {openTasksSentence("console.rest.confirm.assistant.open_tasks_stay", "Ada", 1234), "Ada has 1,234 open tasks (active or paused): they stay open without a caller until you enable it again."},
		"other live key":              {sayN("console.rest.confirm.key.others_keep", 1, map[string]any{"Name": "Ada"}), "Ada keeps 1 other live key, which keep working."},
		"live keys stop":              {sayN("console.rest.confirm.assistant.disabled_keys_stop", 2, map[string]any{"Name": "Ada"}), "Assistant Ada is disabled: its 2 live keys stop working immediately, and it cannot call the API or the MCP server."},
		"webhook no answer, pending":  {failingWords(webhooks.Attempt{At: at, Error: "timeout"}, webhooks.Delivery{URL: "https://a.example/h", State: webhooks.Pending, NextAttemptAt: at.Add(30 * time.Second)}), "no answer (timeout) from https://a.example/h at 10:04:00, next try 10:04:30."},
		"webhook HTTP, removed":       {failingWords(webhooks.Attempt{At: at, Status: 500}, webhooks.Delivery{EndpointRemoved: true}), "HTTP 500 Internal Server Error at 10:04:00; endpoint removed; not tried again."},
		"webhook HTTP, no more tries": {failingWords(webhooks.Attempt{At: at, Status: 404}, webhooks.Delivery{URL: "https://a.example/h"}), "HTTP 404 Not Found from https://a.example/h at 10:04:00; no more tries (Resend to try again)."},
		"deadlines":                   {say("console.rest.policies.deadlines", map[string]any{"Agents": metricsDuration(24 * time.Hour), "Customers": metricsDuration(30 * time.Minute)}), "agents 24h, customers 30m"},
		"no such user":                {refusal(apperr.NotFound, "no_user", nil).Message, "No such user."},
		"decided already":             {refusal(apperr.IllegalTransition, "decided_already", map[string]any{"State": layout.StateLabel(controlplane.Approved)}).Message, "This request is " + controlplane.Approved.Label() + " and takes no more decisions."},
		"bulk count":                  {sayN("console.rest.bulk.error.count", bulkMax, nil), "choose between 1 and 50 requests"},
	}
	for _, s := range []controlplane.Stage{controlplane.StagePropose, controlplane.StageAssisted, controlplane.StageAutonomous} {
		out["stage "+s.Label()] = [2]string{stageLabel(s), s.Label()}
	}
	for _, r := range notDispatchedReasons {
		out["not dispatched "+string(r)] = [2]string{notDispatchedWords(r), r.Sentence()}
	}
	for name, roles := range map[string][]string{"unknown role": {"agent", "boss"}, "agents missing": {"manager"}} {
		out["deciders "+name] = [2]string{approverRolesProblem(roles), controlplane.ApproverRolesProblem(roles)}
	}
	return out
}

// TestTheConsolesRestWordsReadAsBefore: from the catalogue the words read
// as they did written in code, controlplane's as the API still says them,
// and a count agrees with its noun and verb ("1 open task … it waits").
func TestTheConsolesRestWordsReadAsBefore(t *testing.T) {
	for name, w := range consoleRestWords() {
		if w[0] != w[1] {
			t.Errorf("%s: %q, want %q", name, w[0], w[1])
		}
	}
}

// TestTheConsolesRestWordsComeFromTheCatalogue: each of them is catalogue
// messages (console.rest.*), so an installation's override shows: under a
// marked console every one is marked.
func TestTheConsolesRestWordsComeFromTheCatalogue(t *testing.T) {
	pseudotest.InstallMarkedConsole(t)
	for name, w := range consoleRestWords() {
		if !strings.HasPrefix(w[0], "⟦") || !strings.HasSuffix(w[0], "⟧") {
			t.Errorf("%s: %q is not from the catalogue", name, w[0])
		}
	}
}
