package console

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/internal/metrics"
	"countersign/internal/money"
	"countersign/views"
	"countersign/web/kit"
)

// defaultMetricsDays is the period the metrics page shows unless asked.
const defaultMetricsDays = 28

// maxMetricsDays bounds a period, so a page reads at most this many days of
// roll-ups.
const maxMetricsDays = 366

// metricsFilter reads the filter from the query string; an unreadable
// date comes back as a field error and the default period.
func (h *Handler) metricsFilter(c echo.Context) (metrics.Filter, views.FieldErrors) {
	now := h.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	f := metrics.Filter{From: today.AddDate(0, 0, 1-defaultMetricsDays), To: today.AddDate(0, 0, 1),
		System: c.QueryParam("system"), Action: c.QueryParam("action"), Intent: c.QueryParam("intent"),
		Assistant: c.QueryParam("assistant")}
	errs := views.FieldErrors{}
	if v := c.QueryParam("from"); v != "" {
		if d, err := time.Parse(time.DateOnly, v); err != nil {
			errs["from"] = say("console.rest.metrics.error.from", nil)
		} else {
			f.From = d
		}
	}
	if v := c.QueryParam("to"); v != "" {
		if d, err := time.Parse(time.DateOnly, v); err != nil {
			errs["to"] = say("console.rest.metrics.error.to", nil)
		} else {
			f.To = d.AddDate(0, 0, 1)
		}
	}
	switch {
	case !f.From.Before(f.To):
		errs["to"] = say("console.rest.metrics.error.to_before_from", nil)
		f.From, f.To = today.AddDate(0, 0, 1-defaultMetricsDays), today.AddDate(0, 0, 1)
	case f.To.Sub(f.From) > maxMetricsDays*24*time.Hour:
		errs["from"] = sayN("console.rest.metrics.error.too_long", maxMetricsDays, nil)
		f.From = f.To.AddDate(0, 0, -maxMetricsDays)
	}
	return f, errs
}

func (h *Handler) metricsReport(c echo.Context) (metrics.Report, views.FieldErrors, error) {
	f, errs := h.metricsFilter(c)
	rep, err := h.cfg.Metrics.Build(c.Request().Context(), f, h.Now())
	return rep, errs, err
}

// handleMetrics answers GET /metrics: the manager's action-outcome metrics
// for the filter, each with its number, warning, definition, week-over-week
// comparison, trend chart and table.
func (h *Handler) handleMetrics(c echo.Context) error {
	rep, errs, err := h.metricsReport(c)
	if err != nil {
		return err
	}
	dims, err := h.cfg.Metrics.Dimensions(c.Request().Context())
	if err != nil {
		return err
	}
	f := rep.Filter
	v := views.MetricsView{
		Filter: views.MetricsFilter{From: f.From.Format(time.DateOnly), To: f.To.AddDate(0, 0, -1).Format(time.DateOnly),
			System: f.System, Action: f.Action, Intent: f.Intent, Assistant: f.Assistant,
			Systems: plainOptions(dims.Systems, nil), ActionList: plainOptions(dims.Actions, h.actionTitle),
			Intents: plainOptions(dims.Intents, intentWords), Assistants: plainOptions(dims.Assistants, h.assistantNames(c.Request().Context())), Errors: errs},
		Query: filterQuery(f).Encode(),
	}
	v.Period = h.periodWords(c.Request().Context(), f)
	for _, r := range rep.Results {
		v.Cards = append(v.Cards, metricCard(r, h.Now()))
		if r.Value.Warn {
			v.Attention = append(v.Attention, views.AttentionItem{ID: r.ID, Name: metricName(r.Definition), Value: r.Format(r.Value), Alert: metricWords(r.Definition, "alert", r.Alert)})
		}
	}
	t := h.sectionTables(rep)
	v.Handoff, v.Actions, v.NotDispatched, v.Rejections, v.Readiness = t.handoff, t.actions, t.notDispatched, t.rejections, t.readiness
	v.WithoutTask = h.withoutTaskCard(c.Request().Context(), rep)
	v.Unverified = views.UnverifiedCard{Count: money.Count(rep.Unverified), Oldest: say("console.labels.metric.unverified.none_waiting", nil),
		Noun: sayN("console.labels.metric.unverified.noun", rep.Unverified, nil),
		Warn: rep.Unverified > 0 && rep.OldestUnverified >= time.Hour}
	if rep.Unverified > 0 {
		v.Unverified.Oldest = metrics.Human(rep.OldestUnverified)
	}
	if v.Unverified.Warn {
		v.Attention = append(v.Attention, views.AttentionItem{ID: "unverified", Href: "/tasks?need=unverified", Name: say("console.labels.metric.unverified", nil), Value: v.Unverified.Count,
			Alert: say("console.labels.metric.unverified.alert", locale.Params{"Oldest": v.Unverified.Oldest})})
	}
	p := h.Page(c, title("metrics", nil))
	status := http.StatusOK
	if len(errs) > 0 {
		status = http.StatusUnprocessableEntity
	}
	return kit.Render(c, status, views.Metrics(p, v))
}

// metricsSections are the page's sections below the cards: the two
// group charts with their tables, the reasons and stage readiness.
type metricsSections struct {
	handoff, actions          views.GroupTable
	notDispatched, rejections []views.ReasonRow
	readiness                 []views.ReadinessRow
}

func (h *Handler) sectionTables(rep metrics.Report) metricsSections {
	var t metricsSections
	t.handoff = groupTable("handoff-by-intent", say("console.labels.metric.handoff_by_intent", nil), say("console.labels.metric.handoff_by_intent.column", nil),
		say("console.labels.metric.handoff_by_intent.caption", nil), rep.HandoffByIntent, intentWords)
	t.actions = groupTable("success-by-action", say("console.labels.metric.success_by_action", nil), say("console.labels.metric.success_by_action.column", nil),
		say("console.labels.metric.success_by_action.caption", nil), rep.SuccessByAction, h.actionTitle)
	for _, r := range rep.NotDispatched {
		t.notDispatched = append(t.notDispatched, views.ReasonRow{Reason: notDispatchedWords(controlplane.NotDispatchedReason(r.Reason)), Count: money.Count(r.N)})
	}
	for _, r := range rep.Rejections {
		t.rejections = append(t.rejections, views.ReasonRow{Reason: r.Reason, Count: money.Count(r.N)})
	}
	for _, r := range rep.Readiness {
		t.readiness = append(t.readiness, views.ReadinessRow{System: r.System, Action: r.Action, Title: h.actionTitle(r.System + "/" + r.Action), Stage: stageLabel(controlplane.Stage(r.Stage)),
			Sample: money.Count(r.Settled), AtStage: money.Count(r.AtStage), ErrorRate: metricsRatioText(r.ErrorRateAtStage), EditRate: metricsRatioText(r.EditRateAtStage),
			AllErrorRate: metricsRatioText(r.ErrorRate), AllEditRate: metricsRatioText(r.EditRate)})
	}
	return t
}

// actionTitle says an action ("system/action" or "action") by its title:
// "Refund an order (shop)"; an action no connected system offers is shown
// by its name.
func (h *Handler) actionTitle(name string) string {
	system, action, qualified := adapter.ParseActionName(name)
	if qualified {
		if _, spec, err := h.cfg.Registry.Action(system, action); err == nil && spec.Title != "" {
			return say("console.labels.action_named", locale.Params{"Title": spec.Title, "Name": system})
		}
		return name
	}
	for _, system := range h.cfg.Registry.Offering(action) {
		if _, spec, err := h.cfg.Registry.Action(system, action); err == nil && spec.Title != "" {
			return spec.Title
		}
	}
	return name
}

// actionName names an action for people: the title its system gives it
// ("Refund an order"), as the queue and metrics pages say it, else its code
// in words.
func (h *Handler) actionName(action string) string {
	if t := h.actionTitle(action); t != action {
		return t
	}
	return actionWords(action)
}

// plainOptions are a filter's choices: the value as recorded, the label in
// words when words is given.
func plainOptions(values []string, words func(string) string) []views.Option {
	out := make([]views.Option, len(values))
	for i, v := range values {
		out[i] = views.Option{Value: v, Label: v}
		if words != nil {
			out[i].Label = words(v)
		}
	}
	return out
}

// assistantNames names assistants by id for people; an id it cannot
// name (no catalog, or a failed read) is shown as it is.
func (h *Handler) assistantNames(ctx context.Context) func(string) string {
	names := map[string]string{}
	if h.cfg.Assistants != nil {
		if list, err := h.cfg.Assistants.List(ctx); err == nil {
			for _, a := range list {
				names[a.ID] = a.Name
			}
		}
	}
	return func(id string) string {
		if n := names[id]; n != "" {
			return n
		}
		return id
	}
}

// periodWords says the filter in a phrase: "2026-03-05 to 2026-04-01,
// Refund an order, asked for: A high-risk change".
func (h *Handler) periodWords(ctx context.Context, f metrics.Filter) string {
	out := say("console.rest.metrics.period", locale.Params{"From": f.From.Format(time.DateOnly), "To": f.To.AddDate(0, 0, -1).Format(time.DateOnly)})
	assistant := f.Assistant
	if assistant != "" {
		assistant = h.assistantNames(ctx)(assistant)
	}
	for _, d := range []struct{ id, v string }{{"system", f.System}, {"action", h.actionTitle(f.Action)},
		{"intent", intentWords(f.Intent)}, {"assistant", assistant}} {
		if d.v != "" {
			out = say("console.rest.metrics.period."+d.id, locale.Params{"Period": out, "Value": d.v})
		}
	}
	return out
}

// filterQuery is the filter as the query string the page reads.
func filterQuery(f metrics.Filter) url.Values {
	q := url.Values{"from": {f.From.Format(time.DateOnly)}, "to": {f.To.AddDate(0, 0, -1).Format(time.DateOnly)}}
	for k, v := range map[string]string{"system": f.System, "action": f.Action, "intent": f.Intent, "assistant": f.Assistant} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

// metricsRatioText is a share with its fraction, or "no data".
func metricsRatioText(v metrics.Value) string {
	if !v.HasData {
		return say("console.labels.metric.no_data", nil)
	}
	return say("console.rest.metrics.ratio", locale.Params{"Share": metrics.Percent(v.Ratio), "Num": money.Count(v.Num), "Den": money.Count(v.Den)})
}

// Tick steps of the trend charts: shares, and times in seconds.
var (
	ratioSteps    = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.25}
	durationSteps = []float64{900, 1800, 3600, 7200, 14400, 21600, 43200, 86400, 172800, 604800}
)

// tickPercent writes a tick of a share: "95%", "2.5%".
func tickPercent(r float64) string {
	return strconv.FormatFloat(math.Round(r*1000)/10, 'f', -1, 64) + "%"
}

// tickDuration writes a tick of a time: "0", "15m", "4h", "2d".
func tickDuration(secs float64) string {
	if secs <= 0 {
		return "0"
	}
	return metrics.Human(time.Duration(secs) * time.Second)
}

// metricCard is a metric's card; a trend that ends on now's day (UTC)
// draws that day apart, as today so far.
func metricCard(r metrics.Result, now time.Time) views.MetricCard {
	c := views.MetricCard{ID: r.ID, Name: metricName(r.Definition), Value: r.Format(r.Value), Definition: metricWords(r.Definition, "text", r.Text),
		WarningRule: metricWords(r.Definition, "warning", r.WarningText), Alert: metricWords(r.Definition, "alert", r.Alert),
		Warn: r.Value.Warn, ThisWeek: r.Format(r.ThisWeek), LastWeek: r.Format(r.LastWeek)}
	switch {
	case !r.Value.HasData:
	case r.Kind == metrics.Duration:
		c.Detail = say("console.rest.metrics.detail_over", locale.Params{"Den": money.Count(r.Value.Den)})
	default:
		c.Detail = say("console.rest.metrics.detail_of", locale.Params{"Num": money.Count(r.Value.Num), "Den": money.Count(r.Value.Den)})
	}
	labels := make([]string, len(r.Trend))
	values := make([]float64, len(r.Trend))
	texts := make([]string, len(r.Trend))
	scale := views.ChartScale{Steps: ratioSteps, Min: 0, Max: 1, Format: tickPercent}
	title := say("console.labels.metric.per_day", locale.Params{"Metric": c.Name})
	if r.Kind == metrics.Duration {
		// The 9-in-10 time of each day, from zero: the scale fits the
		// slowest day and the warning line.
		scale = views.ChartScale{Steps: durationSteps, Min: 0, Max: math.Inf(1), Zero: true, Format: tickDuration}
		title = say("console.labels.metric.per_day_duration", locale.Params{"Metric": c.Name})
	}
	for i, l := range r.Lines {
		scale.Lines = append(scale.Lines, views.ChartLine{Value: l.Value, Label: metricWords(r.Definition, "line_"+strconv.Itoa(i), l.Label)})
	}
	for i, pt := range r.Trend {
		labels[i] = pt.Day.Format(time.DateOnly)
		values[i], texts[i] = math.NaN(), r.Format(pt.Value)
		switch {
		case !pt.Value.HasData:
		case r.Kind == metrics.Duration:
			values[i] = pt.Value.P90Within
		default:
			values[i] = pt.Value.Ratio
		}
	}
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	partial := len(r.Trend) > 0 && r.Trend[len(r.Trend)-1].Day.Equal(today)
	c.Chart = views.NewLineChart(r.ID, title, labels, values, texts, scale, partial)
	return c
}

func groupTable(id, heading, column, title string, groups []metrics.Group, words func(string) string) views.GroupTable {
	var labels, texts []string
	var values []float64
	for _, g := range groups {
		if !g.Value.HasData {
			continue
		}
		labels, values, texts = append(labels, words(g.Label)), append(values, g.Value.Ratio), append(texts, metricsRatioText(g.Value))
	}
	return views.GroupTable{Heading: heading, Column: column, Chart: views.NewBarChart(id, title, labels, values, texts, 1)}
}

// handleMetricsCSV answers GET /metrics/:file, where file is one of the
// page's tables with ".csv": summary, trend, handoff_by_intent, actions,
// reasons, readiness. Any other name is not found.
func (h *Handler) handleMetricsCSV(c echo.Context) error {
	name, ok := strings.CutSuffix(c.Param("file"), ".csv")
	if !ok {
		return refusal(apperr.NotFound, "no_table", nil)
	}
	rep, errs, err := h.metricsReport(c)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return apperr.InvalidFields(errs)
	}
	var rows [][]string
	switch name {
	case "summary":
		rows = append(rows, []string{"metric", "value", "numerator", "denominator", "p50_seconds", "p90_seconds", "warning", "last_7_days", "previous_7_days"})
		for _, r := range rep.Results {
			numerator := metricsNum(r.Value.Num)
			if r.Kind == metrics.Duration {
				numerator = "" // a distribution has a sample size, not a numerator
			}
			rows = append(rows, []string{r.ID, r.Format(r.Value), numerator, metricsNum(r.Value.Den), metricsSecs(r.Value.P50), metricsSecs(r.Value.P90),
				strconv.FormatBool(r.Value.Warn), r.Format(r.ThisWeek), r.Format(r.LastWeek)})
		}
		rows = append(rows, []string{"unverified_now", metricsNum(rep.Unverified), "", "", "", "", strconv.FormatBool(rep.Unverified > 0 && rep.OldestUnverified >= time.Hour),
			"", ""}, []string{"oldest_unverified_seconds", strconv.Itoa(int(rep.OldestUnverified.Seconds())), "", "", "", "", "", "", ""})
	case "trend":
		rows = append(rows, []string{"day", "metric", "value", "numerator", "denominator", "p50_seconds", "p90_seconds"})
		for _, r := range rep.Results {
			for _, pt := range r.Trend {
				rows = append(rows, []string{pt.Day.Format(time.DateOnly), r.ID, r.Format(pt.Value), metricsNum(pt.Value.Num), metricsNum(pt.Value.Den),
					metricsSecs(pt.Value.P50), metricsSecs(pt.Value.P90)})
			}
		}
	case "handoff_by_intent", "actions":
		groups := rep.HandoffByIntent
		if name == "actions" {
			groups = rep.SuccessByAction
		}
		rows = append(rows, []string{"group", "rate", "numerator", "denominator"})
		for _, g := range groups {
			rows = append(rows, []string{g.Label, metricsRatioText(g.Value), metricsNum(g.Value.Num), metricsNum(g.Value.Den)})
		}
	case "reasons":
		rows = append(rows, []string{"kind", "reason", "invocations"})
		for _, r := range append(rep.NotDispatched, rep.Rejections...) {
			rows = append(rows, []string{r.Kind, r.Reason, metricsNum(r.N)})
		}
	case "readiness":
		rows = append(rows, []string{"system", "action", "stage", "settled", "error_rate", "edit_rate", "settled_at_current_stage",
			"error_rate_at_current_stage", "edit_rate_at_current_stage"})
		for _, r := range rep.Readiness {
			rows = append(rows, []string{r.System, r.Action, strconv.Itoa(r.Stage), metricsNum(r.Settled), metricsRatioText(r.ErrorRate), metricsRatioText(r.EditRate),
				metricsNum(r.AtStage), metricsRatioText(r.ErrorRateAtStage), metricsRatioText(r.EditRateAtStage)})
		}
	default:
		return refusal(apperr.NotFound, "no_table", nil)
	}
	c.Response().Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="metrics-%s.csv"`, name))
	c.Response().Header().Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	for _, row := range rows {
		for i, cell := range row {
			row[i] = metricsCSVSafe(cell)
		}
	}
	if err := w.WriteAll(rows); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// metricsCSVSafe defuses a cell a spreadsheet would run as a formula (reasons are
// free text typed by people).
func metricsCSVSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func metricsNum(n int64) string { return strconv.FormatInt(n, 10) }

func metricsSecs(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case f == 0:
		return ""
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}
