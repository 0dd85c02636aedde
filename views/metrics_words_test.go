package views

import (
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestTheMetricsComeFromTheCatalogue: the metrics page (metrics needing
// attention, one or several, or none; the filters with an error; a card
// with its warning, trend, dashed line and today's ring, and one with
// nothing to draw; the unverified results; the group, reasons, readiness
// and reports-without-a-customer sections), a metric's day table and the
// section tables, as fragments and as pages, write no text of their own:
// an installation's override of every console text shows, and nothing
// else. The metrics' names, definitions, figures and the period are made
// by web/console and are data here.
func TestTheMetricsComeFromTheCatalogue(t *testing.T) {
	installMarkedConsole(t)
	p := Page{Title: "Metrics", User: &User{Name: "Ada", RoleLabel: "agent"}, CSRF: "tok"}
	chart := LineChart{ID: "c1", Points: []ChartPoint{{Label: "May 1", Text: "5%", Value: 5}}, Today: &ChartPoint{Label: "May 2", Text: "6%"},
		Ticks: []ChartTick{{Label: "10%", Line: true}, {Label: "0%"}}, Lines: []ChartLine{{Label: "warns at 8%"}}, FirstDay: "May 1", LastDay: "May 2"}
	group := GroupTable{Heading: "Handoff by intent", Column: "Intent", Chart: BarChart{ID: "handoff", Bars: []ChartBar{{Label: "refund", Text: "5%"}}}}
	full := MetricsView{
		Attention: []AttentionItem{{ID: "errors", Name: "Error rate", Value: "5%", Alert: "Above 2% for a week."}, {ID: "unverified", Name: "Unconfirmed", Value: "3", Alert: "One waited 2h.", Href: "/tasks"}},
		Period:    "May 1 – May 7, 2026",
		Filter:    MetricsFilter{From: "2026-05-01", Systems: []Option{{Value: "shop", Label: "shop"}}, Errors: FieldErrors{"from": "The date is not a date"}},
		Cards: []MetricCard{{ID: "c1", Name: "Error rate", Value: "5%", Detail: "of 100 requests", Definition: "Requests that failed.",
			WarningRule: "Warns above 2%.", Alert: "Above 2% for a week.", Warn: true, ThisWeek: "4%", LastWeek: "3%", Chart: chart},
			{ID: "c2", Name: "Edit rate", Value: "0%", Chart: LineChart{ID: "c2"}}},
		Handoff: group, Actions: GroupTable{Heading: "Success by action", Column: "Action", Chart: BarChart{ID: "actions"}},
		Unverified:  UnverifiedCard{Count: "3", Noun: "requests", Oldest: "2h 5m", Warn: true},
		WithoutTask: WithoutTaskCard{Rows: []WithoutTaskRow{{AssistantID: "a1", Assistant: "Shop bot", Conversations: "3", Events: "4"}}, Granted: "Helper and Other"},
		Query:       "from=2026-05-01",
	}
	one := full
	one.Attention = full.Attention[:1]
	rows := []ReadinessRow{{System: "shop", Action: "refund", Title: "Refund an order", Stage: "3", Sample: "10", AtStage: "5",
		ErrorRate: "1%", EditRate: "2%", AllErrorRate: "3%", AllEditRate: "4%"}}
	day := MetricsDayTable{ID: "c1", Name: "Error rate", Period: "May 1 – May 7, 2026", Points: chart.Points, Today: chart.Today, Back: "/metrics"}
	section := func(id string) MetricsSectionTable {
		return MetricsSectionTable{ID: id, Name: "Handoff by intent", Period: "May 1 – May 7, 2026", Back: "/metrics", Group: group,
			NotDispatched: []ReasonRow{{Reason: "The task was paused", Count: "1"}}, Readiness: rows}
	}
	data := []string{"Metrics", "Ada", "agent", "Error rate", "5%", "Above 2% for a week.", "Unconfirmed", "One waited 2h.",
		"May 1 – May 7, 2026", "The date is not a date", "shop", "of 100 requests", "Requests that failed.", "Warns above 2%.",
		"4%", "3%", "Edit rate", "0%", "Handoff by intent", "Intent", "refund", "Success by action", "Action", "requests",
		"2h 5m", "Shop bot", "Helper and Other", "May 1", "May 2", "6%", "10%", "warns at 8%", "Refund an order",
		"The task was paused"}
	for name, c := range map[string]templ.Component{
		"metrics":                Metrics(p, full),
		"one needs attention":    Metrics(p, one),
		"nothing":                Metrics(p, MetricsView{Period: "May 1 – May 7, 2026"}),
		"a day table's page":     MetricsDayTablePage(p, day),
		"a day table":            MetricsDayTableFragment(day),
		"the reasons' page":      MetricsSectionTablePage(p, section("reasons")),
		"no reasons":             MetricsSectionTableFragment(MetricsSectionTable{ID: "reasons"}),
		"readiness":              MetricsSectionTableFragment(section("readiness")),
		"a group":                MetricsSectionTableFragment(section("handoff")),
		"a group without data":   MetricsSectionTableFragment(MetricsSectionTable{ID: "actions"}),
		"reports without a task": reportsWithoutTask(WithoutTaskCard{}),
	} {
		_, html := renderDoc(t, c)
		if strays := consoleStrays(html, data...); len(strays) > 0 {
			t.Errorf("%s writes text of its own:\n%s", name, strings.Join(strays, "\n"))
		}
		if !strings.Contains(html, "⟦") {
			t.Errorf("%s shows no console text", name)
		}
	}
}
