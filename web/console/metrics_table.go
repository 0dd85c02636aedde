package console

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/locale"
	"countersign/internal/metrics"
	"countersign/views"
	"countersign/web/kit"
)

// handleMetricsTable answers GET /metrics/table/:id: one metric per day
// as a table, or one of the sections' tables (handoff-by-intent,
// success-by-action, reasons, readiness), under the metrics page's filter.
// A card's or a section's table fetches it when opened (htmx: the table
// alone); without JavaScript its link opens it as a page of its own. An
// unknown table is not found.
func (h *Handler) handleMetricsTable(c echo.Context) error {
	rep, _, err := h.metricsReport(c)
	if err != nil {
		return err
	}
	if t, ok := h.sectionTable(c.Request().Context(), rep, c.Param("id")); ok {
		if c.Request().Header.Get("HX-Request") == "true" {
			return kit.Render(c, http.StatusOK, views.MetricsSectionTableFragment(t))
		}
		return kit.Render(c, http.StatusOK, views.MetricsSectionTablePage(h.Page(c, t.Name), t))
	}
	for _, r := range rep.Results {
		if r.ID != c.Param("id") {
			continue
		}
		card := metricCard(r, h.Now())
		t := views.MetricsDayTable{ID: r.ID, Name: metricName(r.Definition), Period: h.periodWords(c.Request().Context(), rep.Filter), Points: card.Chart.Points,
			Today: card.Chart.Today,
			Back:  "/metrics?" + filterQuery(rep.Filter).Encode() + "#m-" + r.ID}
		if c.Request().Header.Get("HX-Request") == "true" {
			return kit.Render(c, http.StatusOK, views.MetricsDayTableFragment(t))
		}
		return kit.Render(c, http.StatusOK, views.MetricsDayTablePage(h.Page(c, say("console.labels.metric.per_day", locale.Params{"Metric": t.Name})), t))
	}
	return refusal(apperr.NotFound, "no_metric", nil)
}

// sectionTable is the section table id names, if it names one.
func (h *Handler) sectionTable(ctx context.Context, rep metrics.Report, id string) (views.MetricsSectionTable, bool) {
	s := h.sectionTables(rep)
	t := views.MetricsSectionTable{ID: id, Period: h.periodWords(ctx, rep.Filter)}
	switch id {
	case "handoff-by-intent":
		t.Group = s.handoff
	case "success-by-action":
		t.Group = s.actions
	case "reasons":
		t.Name, t.NotDispatched, t.Rejections = say("console.labels.metric.reasons", nil), s.notDispatched, s.rejections
	case "readiness":
		t.Name, t.Readiness = say("console.labels.metric.readiness", nil), s.readiness
	default:
		return t, false
	}
	if t.Name == "" {
		t.Name = t.Group.Heading
	}
	t.Back = "/metrics?" + filterQuery(rep.Filter).Encode() + "#h-" + id
	return t, true
}
