package metrics

import (
	"context"
	"fmt"
	"sort"
	"time"

	"countersign/store"
)

// Filter is what the manager narrows the page to: the store's filter of
// the roll-ups, named here because web names no store type. From and To
// are days (UTC midnights): From inclusive, To exclusive. System, Action,
// Intent and Assistant narrow it to one of each when not empty; Intent
// narrows conversations only, as invocations carry none.
type Filter = store.MetricsFilter

// Result is one metric over the filter: its value, a value per day for the
// trend, and the last seven days against the seven before.
type Result struct {
	Definition
	Value    Value
	Trend    []Point
	ThisWeek Value
	LastWeek Value
}

// Point is one day of a trend; HasData is false for a day without data.
type Point struct {
	Day   time.Time
	Value Value
}

// Group is a metric's value for one intent or action.
type Group struct {
	Label string
	Value Value
}

// Readiness is the evidence for an action's next stage: the error and edit
// rates of the action's requests proposed in the period, and how many they
// rest on — the same requests the action success table counts, whatever
// stage each was proposed at — with how many of them were proposed at the
// stage the action is on now.
type Readiness struct {
	System, Action string
	Stage          int
	// Settled is the sample: the action's requests of the period that came
	// to an end (the action success rate's denominator).
	Settled int64
	// AtStage is how many of Settled were proposed at Stage.
	AtStage int64
	// ErrorRateAtStage and EditRateAtStage are the rates of the AtStage
	// requests: the evidence for the stage the action is on now, the
	// figure beside "stage 4". ErrorRate and EditRate are of all Settled,
	// whatever stage each was proposed at.
	ErrorRateAtStage, EditRateAtStage Value
	ErrorRate                         Value
	EditRate                          Value
}

// Report is everything the metrics page shows.
type Report struct {
	Filter  Filter
	Results []Result
	// HandoffByIntent ranks intents by handoff rate, highest first.
	HandoffByIntent []Group
	// SuccessByAction is the action success rate of each action.
	SuccessByAction []Group
	NotDispatched   []store.ReasonCount
	Rejections      []store.ReasonCount
	Unverified      int64
	// OldestUnverified is how long the oldest unverified invocation has
	// waited; zero when there is none.
	OldestUnverified time.Duration
	Readiness        []Readiness
	// WithoutTask is, per assistant, what it reported on conversations
	// that count in no figure above: no task of its own there for a
	// customer the business vouched for, and no admin's grant to count
	// its reports without one. Its own claims, shown apart.
	WithoutTask []store.UncountedReport
}

// Source is where the report reads its roll-ups.
type Source interface {
	InvocationDays(ctx context.Context, f store.MetricsFilter) ([]store.InvocationDay, error)
	ConversationDays(ctx context.Context, f store.MetricsFilter) ([]store.ConversationDay, error)
	ReportsWithoutTask(ctx context.Context, f store.MetricsFilter) ([]store.UncountedReport, error)
	RefusalDays(ctx context.Context, f store.MetricsFilter) ([]store.RefusalDay, error)
	ReasonCounts(ctx context.Context, f store.MetricsFilter) ([]store.ReasonCount, error)
	Unverified(ctx context.Context, f store.MetricsFilter) (int64, time.Time, error)
	Policies(ctx context.Context) ([]store.Policy, error)
}

// Dimensions are the choices of the filter form: every system, action,
// intent and assistant the roll-ups know.
type Dimensions struct {
	Systems, Actions, Intents, Assistants []string
}

// ReportSource is a Source that also lists the filter's choices
// (*store.Store).
type ReportSource interface {
	Source
	MetricsDimensions(ctx context.Context) (systems, actions, intents, assistants []string, err error)
}

// Reports answers the console's metrics pages.
type Reports struct {
	src ReportSource
}

// NewReports returns the reports over src.
func NewReports(src ReportSource) *Reports { return &Reports{src: src} }

// Build computes the report for f; see the package function Build.
func (r *Reports) Build(ctx context.Context, f Filter, now time.Time) (Report, error) {
	return Build(ctx, r.src, f, now)
}

// Dimensions lists the filter form's choices.
func (r *Reports) Dimensions(ctx context.Context) (Dimensions, error) {
	var d Dimensions
	var err error
	d.Systems, d.Actions, d.Intents, d.Assistants, err = r.src.MetricsDimensions(ctx)
	return d, err
}

// Build reads the roll-ups for f (and the two weeks before f.To for the
// week-over-week comparison) and computes every metric. now dates the
// oldest unverified invocation.
func Build(ctx context.Context, src Source, f Filter, now time.Time) (Report, error) {
	if !f.From.Before(f.To) {
		return Report{}, fmt.Errorf("metrics: the period must start before it ends")
	}
	wide := f
	if weekAgo := f.To.AddDate(0, 0, -14); weekAgo.Before(wide.From) {
		wide.From = weekAgo
	}
	inv, err := src.InvocationDays(ctx, wide)
	if err != nil {
		return Report{}, err
	}
	conv, err := src.ConversationDays(ctx, wide)
	if err != nil {
		return Report{}, err
	}
	ref, err := src.RefusalDays(ctx, wide)
	if err != nil {
		return Report{}, err
	}
	perDay := map[time.Time]*Sums{}
	day := func(t time.Time) *Sums {
		k := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		if perDay[k] == nil {
			perDay[k] = &Sums{}
		}
		return perDay[k]
	}
	byAction := map[string]*Sums{}
	byIntent := map[string]*Sums{}
	type stageKey struct {
		system, action string
		stage          int16
	}
	byStage := map[stageKey]*Sums{}
	in := func(t time.Time) bool { return !t.Before(f.From) && t.Before(f.To) }
	for _, r := range inv {
		addInvocation(day(r.Day), r)
		if in(r.Day) {
			k := r.System + "/" + r.Action
			if byAction[k] == nil {
				byAction[k] = &Sums{}
			}
			addInvocation(byAction[k], r)
			sk := stageKey{r.System, r.Action, r.Stage}
			if byStage[sk] == nil {
				byStage[sk] = &Sums{}
			}
			addInvocation(byStage[sk], r)
		}
	}
	for _, r := range conv {
		addConversation(day(r.Day), r)
		if in(r.Day) {
			if byIntent[r.Intent] == nil {
				byIntent[r.Intent] = &Sums{}
			}
			addConversation(byIntent[r.Intent], r)
		}
	}
	for _, r := range ref {
		s := day(r.Day)
		s.Refused += r.Refused
		s.BlockedAfter += r.BlockedAfter
	}
	sumOver := func(from, to time.Time) Sums {
		var out Sums
		for d, s := range perDay {
			if !d.Before(from) && d.Before(to) {
				out = add(out, *s)
			}
		}
		return out
	}
	total := sumOver(f.From, f.To)
	thisWeek := sumOver(f.To.AddDate(0, 0, -7), f.To)
	lastWeek := sumOver(f.To.AddDate(0, 0, -14), f.To.AddDate(0, 0, -7))
	rep := Report{Filter: f}
	for _, d := range Definitions {
		res := Result{Definition: d, Value: d.Evaluate(total), ThisWeek: d.Evaluate(thisWeek), LastWeek: d.Evaluate(lastWeek)}
		for t := f.From; t.Before(f.To); t = t.AddDate(0, 0, 1) {
			var s Sums
			if p := perDay[t]; p != nil {
				s = *p
			}
			res.Trend = append(res.Trend, Point{Day: t, Value: d.Evaluate(s)})
		}
		rep.Results = append(rep.Results, res)
	}
	handoff, _ := Lookup("handoff")
	for intent, s := range byIntent {
		rep.HandoffByIntent = append(rep.HandoffByIntent, Group{Label: intent, Value: handoff.Evaluate(*s)})
	}
	sort.Slice(rep.HandoffByIntent, func(i, j int) bool {
		a, b := rep.HandoffByIntent[i], rep.HandoffByIntent[j]
		if a.Value.Ratio != b.Value.Ratio {
			return a.Value.Ratio > b.Value.Ratio
		}
		return a.Label < b.Label
	})
	success, _ := Lookup("action_success")
	for k, s := range byAction {
		rep.SuccessByAction = append(rep.SuccessByAction, Group{Label: k, Value: success.Evaluate(*s)})
	}
	sort.Slice(rep.SuccessByAction, func(i, j int) bool { return rep.SuccessByAction[i].Label < rep.SuccessByAction[j].Label })

	reasons, err := src.ReasonCounts(ctx, f)
	if err != nil {
		return Report{}, err
	}
	for _, r := range reasons {
		if r.Kind == "not_dispatched" {
			rep.NotDispatched = append(rep.NotDispatched, r)
		} else {
			rep.Rejections = append(rep.Rejections, r)
		}
	}
	n, oldest, err := src.Unverified(ctx, f)
	if err != nil {
		return Report{}, err
	}
	rep.Unverified = n
	if rep.WithoutTask, err = src.ReportsWithoutTask(ctx, f); err != nil {
		return Report{}, err
	}
	if n > 0 {
		rep.OldestUnverified = max(now.Sub(oldest), 0)
	}
	policies, err := src.Policies(ctx)
	if err != nil {
		return Report{}, err
	}
	for _, p := range policies {
		if (f.System != "" && p.System != f.System) || (f.Action != "" && p.Action != f.Action) {
			continue
		}
		var s Sums
		if ss := byAction[p.System+"/"+p.Action]; ss != nil {
			s = *ss
		}
		r := readiness(p, s)
		if ss := byStage[stageKey{p.System, p.Action, p.Stage}]; ss != nil {
			at := readiness(p, *ss)
			r.AtStage, r.ErrorRateAtStage, r.EditRateAtStage = ss.Settled, at.ErrorRate, at.EditRate
		}
		rep.Readiness = append(rep.Readiness, r)
	}
	return rep, nil
}

// readiness is the error rate (settled but not completed) and the edit rate
// (approved by a person with changed arguments) of the action's requests.
func readiness(p store.Policy, s Sums) Readiness {
	r := Readiness{System: p.System, Action: p.Action, Stage: int(p.Stage), Settled: s.Settled}
	r.ErrorRate = ratio(s.Settled-s.Completed, s.Settled)
	r.EditRate = ratio(s.PersonApproved-s.Unedited, s.PersonApproved)
	return r
}

func ratio(num, den int64) Value {
	v := Value{Num: num, Den: den}
	if den > 0 {
		v.HasData, v.Ratio = true, float64(num)/float64(den)
	}
	return v
}

func addInvocation(s *Sums, r store.InvocationDay) {
	s.Proposed += r.Proposed
	s.Settled += r.Settled
	s.Completed += r.Completed
	s.Reversed7d += r.Reversed7d
	s.PersonApproved += r.PersonApproved
	s.Unedited += r.Unedited
	s.Disagreed += r.Disagreed
	s.WaitHist = addHist(s.WaitHist, r.WaitHist)
}

func addConversation(s *Sums, r store.ConversationDay) {
	s.Conversations += r.Conversations
	s.Contained += r.Contained
	s.Clarified += r.Clarified
	s.HandedOff += r.HandedOff
	s.Resolved += r.Resolved
	s.ResolutionHist = addHist(s.ResolutionHist, r.ResolutionHist)
}

func add(a, b Sums) Sums {
	a.Proposed += b.Proposed
	a.Settled += b.Settled
	a.Completed += b.Completed
	a.Reversed7d += b.Reversed7d
	a.PersonApproved += b.PersonApproved
	a.Unedited += b.Unedited
	a.Disagreed += b.Disagreed
	a.WaitHist = addHist(a.WaitHist, b.WaitHist)
	a.Conversations += b.Conversations
	a.Contained += b.Contained
	a.Clarified += b.Clarified
	a.HandedOff += b.HandedOff
	a.Resolved += b.Resolved
	a.ResolutionHist = addHist(a.ResolutionHist, b.ResolutionHist)
	a.Refused += b.Refused
	a.BlockedAfter += b.BlockedAfter
	return a
}

func addHist(a, b []int64) []int64 {
	out := make([]int64, max(len(a), len(b)))
	copy(out, a)
	for i, n := range b {
		out[i] += n
	}
	return out
}
