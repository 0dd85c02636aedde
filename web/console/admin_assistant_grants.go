package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// handleAdminAssistantGrants answers POST /admin/assistants/:id/grants:
// the maxima of the assistant's tasks' limits, whether it may act for any
// customer, and whether its reports count in the metrics without a task. Invalid numbers re-render the page with 422 and what was
// typed; the change and its audit event commit together.
func (h *Handler) handleAdminAssistantGrants(c echo.Context) error {
	ctx := c.Request().Context()
	form := views.GrantsForm{AssistantID: c.Param("id"), MaxWriteBudget: c.FormValue("max_write_budget"),
		MaxInflightLimit: c.FormValue("max_inflight_limit"), MaxRatePerMinute: c.FormValue("max_rate_per_minute"),
		AnyCustomer: c.FormValue("any_customer") == "on", ReportsWithoutTask: c.FormValue("reports_without_task") == "on",
		Errors: views.FieldErrors{}}
	g := assistants.Grants{MaxWriteBudget: formInt(form.MaxWriteBudget), MaxInflightLimit: formInt(form.MaxInflightLimit),
		MaxRatePerMinute: formInt(form.MaxRatePerMinute), AnyCustomer: form.AnyCustomer, ReportsWithoutTask: form.ReportsWithoutTask}
	admin, _ := kit.CurrentUser(c)
	a, err := h.cfg.Assistants.SetGrants(ctx, actorOf(c, admin), form.AssistantID, g)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.Invalid {
		for k, v := range e.Fields {
			form.Errors[k] = v
		}
		return h.renderAdminAssistants(c, http.StatusUnprocessableEntity, views.AdminAssistantsView{
			Form: views.NewAssistantForm{EnableAll: true}, GrantsForm: form})
	}
	if err != nil {
		return err
	}
	h.Log.Info("assistant grants changed", "by", admin.ID, "assistant_id", a.ID, "any_customer", g.AnyCustomer,
		"reports_without_task", g.ReportsWithoutTask)
	kit.SetFlash(c, locale.Console("console.flash.task_limits_saved", locale.Params{"Name": a.Name}), false)
	return kit.SeeOther(c, "/admin/assistants")
}

// formInt reads a whole number typed in a form; anything else is -1, which
// every maximum's range refuses, naming the range.
func formInt(v string) int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return -1
	}
	return n
}

func grantsForm(id string, g assistants.Grants) views.GrantsForm {
	return views.GrantsForm{AssistantID: id, MaxWriteBudget: strconv.Itoa(g.MaxWriteBudget),
		MaxInflightLimit: strconv.Itoa(g.MaxInflightLimit), MaxRatePerMinute: strconv.Itoa(g.MaxRatePerMinute),
		AnyCustomer: g.AnyCustomer, ReportsWithoutTask: g.ReportsWithoutTask}
}
