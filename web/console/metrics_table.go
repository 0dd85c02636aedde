package console

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/views"
	"countersign/web/kit"
)

// handleMetricsTable answers GET /metrics/table/:id: one metric per day
// as a table, under the metrics page's filter. A card's table fetches it
// when opened (htmx: the table alone); without JavaScript its link opens
// it as a page of its own. An unknown metric is not found.
func (h *Handler) handleMetricsTable(c echo.Context) error {
	rep, _, err := h.metricsReport(c)
	if err != nil {
		return err
	}
	for _, r := range rep.Results {
		if r.ID != c.Param("id") {
			continue
		}
		card := metricCard(r)
		t := views.MetricsDayTable{ID: r.ID, Name: r.Name, Period: h.periodWords(rep.Filter), Points: card.Chart.Points,
			Back: "/metrics?" + filterQuery(rep.Filter).Encode() + "#m-" + r.ID}
		if c.Request().Header.Get("HX-Request") == "true" {
			return kit.Render(c, http.StatusOK, views.MetricsDayTableFragment(t))
		}
		return kit.Render(c, http.StatusOK, views.MetricsDayTablePage(h.Page(c, r.Name+" per day"), t))
	}
	return apperr.New(apperr.NotFound, "No such metric.")
}
