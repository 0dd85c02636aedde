package console

import (
	"encoding/json"
	"strings"

	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/money"
	"countersign/views"
)

// The timeline is the audit trail: each event is written from what it
// recorded when it happened, by whom, and never from an invocation's
// current quote, which a later edit or fresh quote may have changed.

// timeline writes a task's events as sentences. A request is named as the
// events before recorded it: the title its proposal (or fresh quote) was
// given, then the title an edit's new quote had.
//
// known names a request whose events recorded no title (history imported
// without them) by what never changes on it, its action and object.
func timeline(events []controlplane.Event, known map[string]string) []views.TimelineRow {
	titles := map[string]string{}
	for id, t := range known {
		titles[id] = t
	}
	previous := ""
	rows := make([]views.TimelineRow, 0, len(events))
	for _, e := range events {
		// A proposal names itself; an edit is about the request as it was
		// before, and renames it for what follows.
		if e.Action != controlplane.EventInvocationEdited {
			if t := recordedTitle(e); t != "" {
				titles[e.InvocationID] = t
			}
		}
		rows = append(rows, timelineRow(e, titles, previous))
		previous = e.InvocationID
		if t := recordedTitle(e); t != "" && e.Action == controlplane.EventInvocationEdited {
			// The next event names the request by its new title rather
			// than "it", which would read as the title named last.
			titles[e.InvocationID], previous = t, ""
		}
	}
	return rows
}

// recordedTitle is the name an event gives its request: the quote's title
// as proposed or quoted again, or as an edit made it. A proposal recorded
// before titles were kept is named by its action and target, which it
// did record.
func recordedTitle(e controlplane.Event) string {
	str := func(k string) string { s, _ := e.Data[k].(string); return strings.TrimSpace(s) }
	switch e.Action {
	case controlplane.EventInvocationProposed, controlplane.EventInvocationRequoted:
		if t := str("title"); t != "" {
			return strings.TrimSuffix(t, ".")
		}
		if a, target := str("action"), str("target"); a != "" && target != "" {
			return say("console.timeline.untitled", locale.Params{"Action": actionWords(a), "Target": target})
		}
	case controlplane.EventInvocationEdited:
		if q, ok := recordedQuote(e.Data["quote_after"]); ok && q.Title != "" {
			return strings.TrimSuffix(q.Title, ".")
		}
	}
	return ""
}

// recordedQuote reads a quote an event kept in its data.
func recordedQuote(v any) (adapter.Quote, bool) {
	var q adapter.Quote
	if v == nil {
		return q, false
	}
	raw, err := json.Marshal(v)
	if err != nil || json.Unmarshal(raw, &q) != nil {
		return q, false
	}
	return q, true
}

// editWords says what an edit changed, from the two quotes it recorded:
// "Amount $12.50 → $20.00; Reason Damaged → Not as described".
func editWords(e controlplane.Event) string {
	before, ok1 := recordedQuote(e.Data["quote_before"])
	after, ok2 := recordedQuote(e.Data["quote_after"])
	if !ok1 || !ok2 {
		return ""
	}
	var parts []string
	var was, now string
	if before.AmountCents != nil && after.AmountCents != nil && *before.AmountCents != *after.AmountCents {
		was, now = money.Format(*before.AmountCents, before.Currency), money.Format(*after.AmountCents, after.Currency)
		parts = append(parts, say("console.timeline.edit.amount", locale.Params{"Was": was, "Now": now}))
	}
	old := map[string]string{}
	for _, l := range before.Lines {
		old[l.Label] = l.To
	}
	for _, l := range after.Lines {
		o, ok := old[l.Label]
		// A line that only carries the amount already said is not said twice.
		if !ok || o == l.To || (o == was && l.To == now) {
			continue
		}
		parts = append(parts, say("console.timeline.edit.line", locale.Params{"Label": l.Label, "Was": o, "Now": l.To}))
	}
	return strings.Join(parts, say("console.timeline.edit.separator", nil))
}

// refusalWords says who refused a proposal and what followed, from what
// the refusal recorded: the business system refused it (by its name, with
// its message), and the target is said to be blocked only when the event
// recorded that a block was made. A proposal stopped by an earlier block
// was refused by Countersign.
func refusalWords(e controlplane.Event) string {
	str := func(k string) string { s, _ := e.Data[k].(string); return strings.TrimSpace(s) }
	target := str("target")
	if target == "" {
		target = str("target_id")
	}
	p := locale.Params{"Actor": actorWords(e), "Action": strings.ToLower(actionWords(str("action"))), "Target": target}
	proposal := say("console.timeline.proposal", p)
	// History imported without the target names none: say so rather
	// than "on :".
	if target == "" {
		proposal = say("console.timeline.proposal_untargeted", p)
		target = say("console.timeline.its_target", nil)
	}
	if e.Action == controlplane.EventProposalBlockedAfterRefusal {
		return say("console.timeline.blocked_after_refusal", locale.Params{"Proposal": proposal, "Target": target})
	}
	id := "console.timeline.refused"
	q := locale.Params{"System": systemWords(str("system")), "Proposal": proposal}
	if m := strings.TrimSuffix(str("message"), "."); m != "" {
		id += "_why"
		q["Why"] = m
	}
	if blocked, _ := e.Data["blocked"].(bool); blocked {
		id += "_blocked"
	}
	return say(id, q)
}

// namesItsActor lists the events whose sentence says who acted itself:
// the actor recorded is the one who proposed, not the one who refused.
var namesItsActor = map[controlplane.EventAction]bool{controlplane.EventProposalRefused: true, controlplane.EventProposalBlockedAfterRefusal: true}
