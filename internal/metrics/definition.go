// Package metrics computes the manager's action-outcome metrics — whether
// letting the assistant act works: containment, action success, reversals,
// clarifications, hand-offs, time to resolution — from the daily roll-ups the
// store keeps, with each metric's definition and warning rule in one place:
// the page shows the same text the code follows.
package metrics

import (
	"fmt"
	"math"
	"strings"
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
	// Alert is what the warning badge says when the metric warns.
	Alert string
	Kind  Kind
	// Lines are the values where the warning starts, drawn on the trend
	// chart: a share for a Ratio, seconds of the 9-in-10 time for a
	// Duration.
	Lines    []Line
	num, den func(Sums) int64
	hist     func(Sums) []int64
	warn     func(Value) bool
}

// Line is a threshold drawn across a trend chart, with its label.
type Line struct {
	Value float64
	Label string
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
	// P90Within is the 9-in-10 time estimated within its bucket (linear
	// between the bucket's edges, by the rank's place among the bucket's
	// values), for a trend line that follows the data instead of sitting
	// on bucket edges; the open last bucket gives its lower edge.
	P90Within float64
	Warn      bool
}

// Definitions are every metric of the page, in the order it shows them.
// Their texts are for a manager: plain words, no event or column names.
var Definitions = []Definition{
	{ID: "containment", Name: "Containment", Kind: Ratio,
		Text: "Of the conversations that started in the period, the share the assistant resolved without a person: it answered, " +
			"looked something up and answered, sent a link, carried out an action or marked the conversation resolved, and never " +
			"handed it to a person.",
		Alert:       "Below 40%: few conversations end without a person.",
		WarningText: "Warns when it falls below 40%; rising containment with falling satisfaction means containing, not resolving.",
		Lines:       []Line{{Value: 0.40, Label: "warns below 40%"}},
		num:         func(s Sums) int64 { return s.Contained }, den: func(s Sums) int64 { return s.Conversations },
		warn: func(v Value) bool { return v.Ratio < 0.40 }},
	{ID: "action_success", Name: "Action success rate", Kind: Ratio,
		Text: "Of the requests proposed in the period that have come to an end, the share that was carried out (a request carried out " +
			"and later reversed counts as carried out). Requests still waiting for a decision or for their result are left out.",
		Alert:       "Below the 95% target: look for tool or validation problems.",
		WarningText: "Warns below 95%: tool or validation problems.",
		Lines:       []Line{{Value: 0.95, Label: "target 95%"}},
		num:         func(s Sums) int64 { return s.Completed }, den: func(s Sums) int64 { return s.Settled },
		warn: func(v Value) bool { return v.Ratio < 0.95 }},
	{ID: "reversal", Name: "Action reversal rate", Kind: Ratio,
		Text:        "Of the requests proposed in the period and carried out, the share that was undone within 7 days (for example a cancellation followed by a reinstatement).",
		Alert:       "Above 5%: customers undo what the assistant did; the confirmation may not be working.",
		WarningText: "Warns above 5%: the confirmation is not working, the assistant executes intents the user did not have.",
		Lines:       []Line{{Value: 0.05, Label: "warns above 5%"}},
		num:         func(s Sums) int64 { return s.Reversed7d }, den: func(s Sums) int64 { return s.Completed },
		warn: func(v Value) bool { return v.Ratio > 0.05 }},
	{ID: "clarification", Name: "Clarification rate", Kind: Ratio,
		Text:        "Of the conversations that started in the period, the share in which the assistant asked the customer a clarifying question.",
		Alert:       "Outside 2% to 30%: below, the assistant may be guessing; above, it asks too much.",
		WarningText: "Warns below 2% (it may be guessing) and above 30% (it asks too much).",
		Lines:       []Line{{Value: 0.02, Label: "warns below 2%"}, {Value: 0.30, Label: "warns above 30%"}},
		num:         func(s Sums) int64 { return s.Clarified }, den: func(s Sums) int64 { return s.Conversations },
		warn: func(v Value) bool { return v.Ratio < 0.02 || v.Ratio > 0.30 }},
	{ID: "handoff", Name: "Handoff rate", Kind: Ratio,
		Text: "Of the conversations that started in the period, the share the assistant handed to a person. Below, the same by " +
			"what the customer first asked for; the ranking is the roadmap.",
		Alert:       "Above 50%: most conversations go to a person.",
		WarningText: "Warns above 50%.",
		Lines:       []Line{{Value: 0.50, Label: "warns above 50%"}},
		num:         func(s Sums) int64 { return s.HandedOff }, den: func(s Sums) int64 { return s.Conversations },
		warn: func(v Value) bool { return v.Ratio > 0.50 }},
	{ID: "resolution_time", Name: "Time to resolution", Kind: Duration,
		Text: "For the conversations that started in the period and were resolved: the time from the customer's first message to " +
			"the moment it was resolved. Shown as the time within which half were resolved, and within which 9 in 10 were, each " +
			"rounded up to the next of " + bucketSteps + ".",
		Alert:       "More than 1 in 10 took over a day: actions add delay without reducing contacts.",
		WarningText: "Warns when more than 1 in 10 take over a day: actions that add latency without reducing contacts.",
		Lines:       []Line{{Value: 86400, Label: "warns at 1 day"}},
		hist:        func(s Sums) []int64 { return s.ResolutionHist },
		warn:        func(v Value) bool { return v.P90 > 86400 }},
	{ID: "acceptance", Name: "Acceptance without edits", Kind: Ratio,
		Text: "Of the requests proposed in the period that a person approved or a customer confirmed, the share accepted exactly as " +
			"the assistant proposed them, without a change: the evidence for letting customers confirm this action themselves.",
		Alert:       "Below 80%: people often change what the assistant proposes.",
		WarningText: "Warns below 80%.",
		Lines:       []Line{{Value: 0.80, Label: "warns below 80%"}},
		num:         func(s Sums) int64 { return s.Unedited }, den: func(s Sums) int64 { return s.PersonApproved },
		warn: func(v Value) bool { return v.Ratio < 0.80 }},
	{ID: "disagreement", Name: "Assistant's summary contradicted by the quote", Kind: Ratio,
		Text: "Of the requests proposed in the period, the share where the assistant's own summary of the change did not match " +
			"what the business system quoted (the quote is what was shown and done).",
		Alert:       "Above 5%: the assistant's own summaries often contradict the quote.",
		WarningText: "Warns above 5%.",
		Lines:       []Line{{Value: 0.05, Label: "warns above 5%"}},
		num:         func(s Sums) int64 { return s.Disagreed }, den: func(s Sums) int64 { return s.Proposed },
		warn: func(v Value) bool { return v.Ratio > 0.05 }},
	{ID: "approval_wait", Name: "Approval wait time", Kind: Duration,
		Text: "For the requests proposed in the period that waited for an agent or the customer and were approved: the time from " +
			"the proposal to the approval. Shown as the time within which half were approved, and within which 9 in 10 were, " +
			"each rounded up to the next of " + bucketSteps + ".",
		Alert:       "More than 1 in 10 waited over 4 hours for a decision.",
		WarningText: "Warns when more than 1 in 10 wait over 4 hours.",
		Lines:       []Line{{Value: 14400, Label: "warns at 4h"}},
		hist:        func(s Sums) []int64 { return s.WaitHist },
		warn:        func(v Value) bool { return v.P90 > 14400 }},
	{ID: "blocked_after_refusal", Name: "Attempts after a policy refusal", Kind: Ratio,
		Text: "How often the assistant tried the same thing again after a policy had refused an action on the same order or " +
			"subscription in the task: the new attempts, over the proposals a policy refused in the period.",
		Alert:       "The assistant tried again after a policy refusal instead of handing off.",
		WarningText: "Warns when there is any: the assistant tried again instead of handing off.",
		num:         func(s Sums) int64 { return s.BlockedAfter }, den: func(s Sums) int64 { return s.Refused },
		warn: func(v Value) bool { return v.Num > 0 }},
}

// bucketSteps lists the histogram's upper edges in words: "1m, 5m, … or 7d".
var bucketSteps = func() string {
	var steps []string
	for _, e := range store.BucketEdges {
		steps = append(steps, Human(time.Duration(e)*time.Second))
	}
	return strings.Join(steps[:len(steps)-1], ", ") + " or " + steps[len(steps)-1]
}()

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
			v.P90Within = PercentileWithin(h, 0.9)
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
		return "half " + BucketLabel(v.P50) + " · 9 in 10 " + BucketLabel(v.P90)
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

// PercentileWithin estimates the q-th value (rank ⌈q·n⌉) inside its
// bucket, taking the bucket's values as spread evenly between its edges:
// 0 for an empty histogram, the lower edge of the open last bucket.
func PercentileWithin(hist []int64, q float64) float64 {
	var n int64
	for _, c := range hist {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := max(int64(math.Ceil(q*float64(n))), 1)
	var cum int64
	for b, c := range hist {
		if c > 0 && cum+c >= rank {
			lo := 0.0
			if b > 0 {
				lo = store.BucketEdges[min(b, len(store.BucketEdges))-1]
			}
			if b >= len(store.BucketEdges) {
				return lo
			}
			return lo + (store.BucketEdges[b]-lo)*float64(rank-cum)/float64(c)
		}
		cum += c
	}
	return store.BucketEdges[len(store.BucketEdges)-1]
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
