package console

import (
	"strings"
	"testing"
	"time"

	"countersign/internal/controlplane"
	"countersign/internal/lists"
	"countersign/internal/locale/pseudotest"
	"countersign/store"
	"countersign/web/layout"
)

// consoleWordsInCode are the console's words written by Go code (not by
// a template), in every case each function has, by what they say.
func consoleWordsInCode() map[string]string {
	at := time.Date(2026, 5, 1, 9, 1, 0, 0, time.UTC)
	out := map[string]string{
		"pager none":           pagerView(0, 0, 0, "tasks").Showing,
		"pager rest":           pagerView(50, 0, 50, "tasks").Showing,
		"pager only":           pagerView(0, 1, 1, "conversations").Showing,
		"pager all":            pagerView(0, 3, 3, "conversations").Showing,
		"pager range":          pagerView(50, 50, 1234, "tasks").Showing,
		"paused":               pausedNotice(0),
		"paused, one to check": pausedNotice(1),
		"paused, two to check": pausedNotice(2),
		"no request yet":       subjectWords("", 0),
		"more requests":        subjectWords("Refund $5.00", 3),
		"left none":            timeLeft(0),
		"left seconds":         timeLeft(5 * time.Second),
		"left minutes":         timeLeft(3*time.Minute + 4*time.Second),
		"left hours":           timeLeft(2*time.Hour + 4*time.Minute),
		"just now":             ago(time.Second),
		"minutes ago":          ago(3 * time.Minute),
		"an hour ago":          ago(time.Hour),
		"hours ago":            ago(5 * time.Hour),
		"days ago":             ago(72 * time.Hour),
	}
	for _, st := range []controlplane.TaskState{controlplane.TaskActive, controlplane.TaskPaused, controlplane.TaskCancelled, controlplane.TaskClosed} {
		out["badge "+string(st)] = taskBadge(st).Label
	}
	row := taskRow(lists.TaskItem{Task: controlplane.Task{State: controlplane.TaskPaused}, Unverified: 1, AwaitingApproval: 2, HandoffsWaiting: 1, AwaitingCustomer: 2})
	for i, n := range row.Needs {
		out["row need "+string(rune('a'+i))] = n
	}
	out["row waiting"] = row.Waiting
	for i, s := range staleSentences([]controlplane.TargetChange{
		{Title: "Refund $5.00", State: controlplane.Completed, At: at},
		{Title: "Refund $5.00", State: controlplane.Dispatching, At: at},
		{Title: "Refund $5.00", State: controlplane.Unverified, At: at},
		{Action: "issue_refund", State: controlplane.Completed, At: at},
		{Action: "issue_refund", State: controlplane.Dispatching, At: at},
		{Action: "issue_refund", State: controlplane.Unverified, At: at},
	}, "order") {
		out["stale "+string(rune('a'+i))] = s
	}
	for _, d := range []time.Duration{time.Second, 4 * time.Minute, 2*time.Hour + 5*time.Minute, 72 * time.Hour} {
		out["waited "+d.String()] = waitedFor(d)
	}
	out["unrecorded time"] = clockOf(nil)
	for _, i := range []string{"informational", "diagnostic", "navigational", "transactional_low", "transactional_high", "ambiguous", "out_of_scope"} {
		out["intent "+i] = intentWords(i)
	}
	for _, m := range []string{"answered", "read_and_answered", "linked", "clarified", "proposed", "executed", "handed_off", "resolved"} {
		out["mode "+m] = modeWords(m)
	}
	for _, st := range []controlplane.State{controlplane.Proposed, controlplane.AwaitingConfirmation, controlplane.AwaitingApproval,
		controlplane.Approved, controlplane.Dispatching, controlplane.Completed, controlplane.Failed, controlplane.Unverified,
		controlplane.NotDispatched, controlplane.Rejected, controlplane.Expired, controlplane.Reversed} {
		out["state "+string(st)] = layout.StateBadge(st).Label
		out["row fallback "+string(st)] = rowFallback(st)
	}
	for _, roles := range [][]string{nil, {"agent", "manager"}, {"agent", "admin"}, {"agent", "manager", "admin"}} {
		out["deciders "+strings.Join(roles, "+")] = decidersWords(controlplane.Policy{ApproverRoles: roles})
	}
	for name, inv := range map[string]controlplane.Invocation{
		"waiting": {State: controlplane.AwaitingApproval}, "approved": {State: controlplane.Approved},
		"sending": {State: controlplane.Dispatching}, "completed": {State: controlplane.Completed},
		"rejected":  {State: controlplane.Rejected, DecisionReason: "Out of stock."},
		"sent back": {State: controlplane.Rejected, DecisionReason: "question: Which order?"},
		"failed":    {State: controlplane.Failed},
	} {
		out["decided "+name] = decidedOutcome(inv, false)
	}
	out["decided first of two"] = decidedOutcome(controlplane.Invocation{State: controlplane.AwaitingApproval}, true)
	for _, k := range []controlplane.ActorKind{controlplane.ActorUser, controlplane.ActorAssistant, controlplane.ActorCustomer,
		controlplane.ActorPolicy, controlplane.ActorSystem} {
		out["actor "+string(k)] = actorWords(controlplane.Event{ActorKind: k, Data: map[string]any{}})
	}
	out["actor named assistant"] = actorWords(controlplane.Event{ActorKind: controlplane.ActorAssistant, Data: map[string]any{"actor_name": "Bot"}})
	// The timeline's sentences from the catalogue so far: those about a
	// task, a hand-off or dispatch as a whole.
	for _, k := range []controlplane.EventAction{controlplane.EventTaskCreated, controlplane.EventTaskActive, controlplane.EventTaskClosed,
		controlplane.EventHandoffTaken, controlplane.EventHandoffDraftDiscarded, controlplane.EventDispatchStoppedGlobally,
		controlplane.EventDispatchResumedGlobally} {
		out["event "+string(k)] = eventSentence(controlplane.Event{Action: k, Data: map[string]any{}}, "")
	}
	out["no customer"] = customerWords("")
	out["no summary"] = noSummaryWords("informational", "", nil)
	out["no summary, customer"] = noSummaryWords("informational", "jo@example.com", nil)
	out["no summary, fact"] = noSummaryWords("informational", "", []string{"Order 7 shipped"})
	out["no summary, both"] = noSummaryWords("informational", "jo@example.com", []string{"Order 7 shipped"})
	out["flood"] = floodWords(lists.HandoffCounts{Waiting: 40, Busiest: store.HandoffAssistant{Name: "Bot", Waiting: 30}})
	return out
}

// TestTheConsolesWordsInCodeComeFromTheCatalogue: every word of the
// console that Go code writes (the task list's needs, badges, pager,
// times, a card's stale sentences) is a console.* message, so an
// installation's override of each shows, whole: nothing written as a
// literal, nothing glued around it.
func TestTheConsolesWordsInCodeComeFromTheCatalogue(t *testing.T) {
	pseudotest.InstallMarkedConsole(t)
	for name, got := range consoleWordsInCode() {
		if !strings.HasPrefix(got, "⟦") || !strings.HasSuffix(got, "⟧") {
			t.Errorf("%s: %q is not one catalogue message", name, got)
		}
	}
}

// TestTheConsolesWordsInCodeReadAsBefore: from the catalogue, the words
// read exactly as they did when written in code.
func TestTheConsolesWordsInCodeReadAsBefore(t *testing.T) {
	got := consoleWordsInCode()
	for name, want := range map[string]string{
		"pager none":                   "No tasks.",
		"pager rest":                   "Nothing more: 50 tasks in all.",
		"pager only":                   "Showing the only conversation.",
		"pager all":                    "Showing all 3 conversations.",
		"pager range":                  "Showing 51–100 of 1,234 tasks.",
		"paused":                       "Further dispatch is paused.",
		"paused, one to check":         "Further dispatch is paused. One earlier request still needs checking.",
		"paused, two to check":         "Further dispatch is paused. 2 earlier requests still need checking.",
		"no request yet":               "No request yet",
		"more requests":                "Refund $5.00 and 2 more requests",
		"left none":                    "no time: the deadline passed",
		"left seconds":                 "5s",
		"left minutes":                 "3m 04s",
		"left hours":                   "2h 04m",
		"just now":                     "just now",
		"minutes ago":                  "3 min ago",
		"an hour ago":                  "1 hour ago",
		"hours ago":                    "5 hours ago",
		"days ago":                     "3 days ago",
		"badge active":                 "Active",
		"badge cancelled":              "Cancelled",
		"row need a":                   "1 result needs checking",
		"row need b":                   "2 requests await approval",
		"row need c":                   "paused: resume or cancel it",
		"row need d":                   "1 hand-off nobody has taken",
		"row waiting":                  "Waiting for the customer to confirm 2 requests.",
		"stale a":                      "“Refund $5.00” completed at 09:01 UTC, after this quote.",
		"stale b":                      "“Refund $5.00” is being sent to this order now (since 09:01 UTC).",
		"stale c":                      "“Refund $5.00” was sent to this order at 09:01 UTC; whether it landed is not known yet.",
		"stale d":                      "Another issue refund completed at 09:01 UTC, after this quote.",
		"waited 1s":                    "under a minute",
		"waited 4m0s":                  "4 min",
		"waited 2h5m0s":                "2 h 05 min",
		"waited 72h0m0s":               "3 days",
		"unrecorded time":              "an unrecorded time",
		"intent transactional_low":     "A low-risk change",
		"mode read_and_answered":       "Looked it up and answered",
		"no summary":                   "No summary. A question.",
		"no summary, customer":         "No summary. A question from jo@example.com.",
		"no summary, fact":             "No summary. A question. It read: Order 7 shipped.",
		"no summary, both":             "No summary. A question from jo@example.com. It read: Order 7 shipped.",
		"state awaiting_approval":      "Pending approval",
		"state approved":               "Approved, not yet sent",
		"state unverified":             "Result needs checking",
		"deciders ":                    "support agents",
		"deciders agent+manager+admin": "support agents, managers and admins",
		"deciders agent+admin":         "support agents and admins",
		"decided sent back":            "Sent back to the assistant with your question: “Which order?”",
		"decided rejected":             "Rejected. The assistant and the customer read: “Out of stock.”",
		"decided failed":               "This request is now Failed.",
		"decided first of two":         "Your approval is recorded. A second, different person must approve it before it can be sent.",
		"actor named assistant":        "Bot (assistant)",
		"actor system":                 "Countersign",
		"event task.created":           "opened the task.",
		"row fallback approved":        "Approved; not sent yet.",
		"row fallback expired":         "Nobody decided before the deadline.",
		"stale f":                      "Another issue refund was sent to this order at 09:01 UTC; whether it landed is not known yet.",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
}
