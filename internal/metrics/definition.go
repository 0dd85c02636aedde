// Package metrics computes the manager's action-outcome metrics — whether
// letting the assistant act works: containment, action success, reversals,
// clarifications, hand-offs, time to resolution — from the daily roll-ups the
// store keeps, with each metric's definition and warning rule in one place:
// the page shows the same text the code follows.
package metrics

import (
	"fmt"
	"math"
	"time"

	"countersign/store"
)

// Kind says how a metric's value is read.
type Kind int

// The kinds of metric.
const (
	// Ratio is a share: a numerator over a denominator.
	Ratio Kind = iota
	// Duration is a distribution of times, read as p50 and p90.
	Duration
)

// Sums are the counters of the roll-ups added up over some days and
// dimensions; every metric is a function of them.
type Sums struct {
	Proposed, Settled, Completed, Reversed7d, PersonApproved, Unedited, Disagreed int64
	WaitHist                                                                      []int64
	Conversations, Contained, Clarified, HandedOff, Resolved                      int64
	ResolutionHist                                                                []int64
	Refused, BlockedAfter                                                         int64
}

// Definition is one metric: what it measures, in words and in code, and
// when it warns.
type Definition struct {
	ID   string
	Name string
	// Text is the definition shown on the page.
	Text string
	// WarningText is the warning rule shown on the page.
	WarningText string
	Kind        Kind
	num, den    func(Sums) int64
	hist        func(Sums) []int64
	warn        func(Value) bool
}

// Value is a metric evaluated over some sums. HasData is false when the
// denominator (or the sample) is zero: the page says "no data", never NaN.
type Value struct {
	HasData bool
	Num     int64
	Den     int64
	// Ratio is Num/Den for a Ratio metric.
	Ratio float64
	// P50 and P90 are bucket upper edges for a Duration metric
	// (math.Inf(1) for the open last bucket).
	P50, P90 float64
	Warn     bool
}

// Definitions are every metric of the page, in the order it shows them.
var Definitions = []Definition{
	{ID: "containment", Name: "Containment", Kind: Ratio,
		Text: "Share of conversations started in the period that were resolved without a person: at least one event in a resolving mode " +
			"(answered, read_and_answered, linked, executed, resolved) and no handed_off event.",
		WarningText: "Warns when it falls below 40%; rising containment with falling satisfaction means containing, not resolving.",
		num:         func(s Sums) int64 { return s.Contained }, den: func(s Sums) int64 { return s.Conversations },
		warn: func(v Value) bool { return v.Ratio < 0.40 }},
	{ID: "action_success", Name: "Action success rate", Kind: Ratio,
		Text: "Share of invocations proposed in the period and now settled (completed, reversed, failed, unverified, not dispatched, " +
			"rejected or expired) that completed; a reversed invocation had completed. Invocations still open are left out.",
		WarningText: "Warns below 95%: tool or validation problems.",
		num:         func(s Sums) int64 { return s.Completed }, den: func(s Sums) int64 { return s.Settled },
		warn: func(v Value) bool { return v.Ratio < 0.95 }},
	{ID: "reversal", Name: "Action reversal rate", Kind: Ratio,
		Text:        "Share of the completed invocations proposed in the period that a linked compensation reversed within 7 days of completing.",
		WarningText: "Warns above 5%: the confirmation is not working, the assistant executes intents the user did not have.",
		num:         func(s Sums) int64 { return s.Reversed7d }, den: func(s Sums) int64 { return s.Completed },
		warn: func(v Value) bool { return v.Ratio > 0.05 }},
	{ID: "clarification", Name: "Clarification rate", Kind: Ratio,
		Text:        "Share of conversations started in the period in which the assistant asked a clarifying question (a clarified event).",
		WarningText: "Warns below 2% (it may be guessing) and above 30% (it asks too much).",
		num:         func(s Sums) int64 { return s.Clarified }, den: func(s Sums) int64 { return s.Conversations },
		warn: func(v Value) bool { return v.Ratio < 0.02 || v.Ratio > 0.30 }},
	{ID: "handoff", Name: "Handoff rate", Kind: Ratio,
		Text: "Share of conversations started in the period with a handed_off event; by intent below, where an intent is the one " +
			"of the conversation's first event. The ranking is the roadmap.",
		WarningText: "Warns above 50%.",
		num:         func(s Sums) int64 { return s.HandedOff }, den: func(s Sums) int64 { return s.Conversations },
		warn: func(v Value) bool { return v.Ratio > 0.50 }},
	{ID: "resolution_time", Name: "Time to resolution", Kind: Duration,
		Text: "End to end, for resolved conversations started in the period: from the conversation's first event to its last event " +
			"in a resolving mode. Shown as p50 and p90, each as the upper edge of its histogram bucket.",
		WarningText: "Warns when p90 is a day or more: actions that add latency without reducing contacts.",
		hist:        func(s Sums) []int64 { return s.ResolutionHist },
		warn:        func(v Value) bool { return v.P90 > 86400 }},
	{ID: "acceptance", Name: "Acceptance without edits", Kind: Ratio,
		Text: "Share of invocations proposed in the period and approved or confirmed by a person whose approved arguments are exactly the " +
			"proposed ones (approved_args_hash = args_hash): the evidence for moving an action from stage 3 to 4.",
		WarningText: "Warns below 80%.",
		num:         func(s Sums) int64 { return s.Unedited }, den: func(s Sums) int64 { return s.PersonApproved },
		warn: func(v Value) bool { return v.Ratio < 0.80 }},
	{ID: "disagreement", Name: "Model/quote disagreement rate", Kind: Ratio,
		Text:        "Share of invocations proposed in the period whose model summary disagreed with the dry-run quote (the quote won).",
		WarningText: "Warns above 5%.",
		num:         func(s Sums) int64 { return s.Disagreed }, den: func(s Sums) int64 { return s.Proposed },
		warn: func(v Value) bool { return v.Ratio > 0.05 }},
	{ID: "approval_wait", Name: "Approval wait time", Kind: Duration,
		Text: "For invocations proposed in the period that waited for a person (agent or customer) and were approved: from the proposal " +
			"to the approval. Shown as p50 and p90, each as the upper edge of its histogram bucket.",
		WarningText: "Warns when p90 is 4 hours or more.",
		hist:        func(s Sums) []int64 { return s.WaitHist },
		warn:        func(v Value) bool { return v.P90 > 14400 }},
	{ID: "blocked_after_refusal", Name: "Attempts after a policy refusal", Kind: Ratio,
		Text: "Proposals refused because a policy had already refused an action on the same target in the task " +
			"(proposal.blocked_after_refusal events in the period), over the dry-run refusals in the period (proposal.refused).",
		WarningText: "Warns when there is any: the assistant tried again instead of handing off.",
		num:         func(s Sums) int64 { return s.BlockedAfter }, den: func(s Sums) int64 { return s.Refused },
		warn: func(v Value) bool { return v.Num > 0 }},
}

// Evaluate computes the metric over s.
func (d Definition) Evaluate(s Sums) Value {
	var v Value
	switch d.Kind {
	case Ratio:
		v.Num, v.Den = d.num(s), d.den(s)
		if v.Den > 0 {
			v.HasData, v.Ratio = true, float64(v.Num)/float64(v.Den)
		} else if v.Num > 0 {
			// Attempts after a refusal can outlive the refusal's period.
			v.HasData, v.Ratio = true, 1
		}
	case Duration:
		h := d.hist(s)
		for _, n := range h {
			v.Den += n
		}
		if v.Den > 0 {
			v.HasData = true
			v.P50, v.P90 = Percentile(h, 0.5), Percentile(h, 0.9)
		}
	}
	if v.HasData && d.warn != nil {
		v.Warn = d.warn(v)
	}
	return v
}

// Format renders the value as the page leads with it.
func (d Definition) Format(v Value) string {
	if !v.HasData {
		return "no data"
	}
	switch d.Kind {
	case Duration:
		return "p50 " + BucketLabel(v.P50) + " · p90 " + BucketLabel(v.P90)
	}
	return Percent(v.Ratio)
}

// Percent formats a share with one decimal.
func Percent(r float64) string { return fmt.Sprintf("%.1f%%", r*100) }

// Percentile returns the upper edge, in seconds, of the histogram bucket
// holding the q-th value (rank ⌈q·n⌉); +Inf for the open last bucket, 0
// for an empty histogram.
func Percentile(hist []int64, q float64) float64 {
	var n int64
	for _, c := range hist {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	rank = max(rank, 1)
	var cum int64
	for b, c := range hist {
		cum += c
		if cum >= rank {
			if b < len(store.BucketEdges) {
				return store.BucketEdges[b]
			}
			return math.Inf(1)
		}
	}
	return math.Inf(1)
}

// BucketLabel says a bucket's upper edge in words: "under 15m".
func BucketLabel(edge float64) string {
	if math.IsInf(edge, 1) {
		return "7 days or more"
	}
	return "under " + Human(time.Duration(edge)*time.Second)
}

// Human writes a duration briefly: 45s, 15m, 4h, 2d.
func Human(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Lookup returns the definition with id.
func Lookup(id string) (Definition, bool) {
	for _, d := range Definitions {
		if d.ID == id {
			return d, true
		}
	}
	return Definition{}, false
}
