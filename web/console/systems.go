package console

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// handleSystems answers GET /systems: every connected system with its
// actions (contract, limits, guidance, current stage) and read tools.
func (h *Handler) handleSystems(c echo.Context) error {
	ctx := c.Request().Context()
	var v views.SystemsView
	for _, sys := range h.cfg.Registry.Systems() {
		sv := views.SystemView{Name: sys.Name()}
		if titled, ok := sys.(interface{ Title() string }); ok {
			sv.Title = titled.Title()
		}
		for _, a := range sys.Actions() {
			stage := say("console.labels.systems.no_policy", nil)
			if p, err := h.cfg.Control.Policy(ctx, sys.Name(), a.Name); err == nil {
				stage = say("console.labels.systems.stage", locale.Params{"N": itoa(int(p.Stage))})
				if !p.Enabled {
					stage = say("console.labels.systems.off", nil)
				}
			}
			sv.Actions = append(sv.Actions, views.ActionView{Name: a.Name, Title: a.Title, Description: a.Description,
				Risk: string(a.Risk), Compensation: a.Compensation, Limits: a.Limits, Guidance: a.Guidance,
				Params: paramViews(a.Params), Stage: stage})
		}
		for _, r := range sys.ReadTools() {
			sv.ReadTools = append(sv.ReadTools, views.ReadToolView{Name: r.Name, Title: r.Title, Description: r.Description,
				Params: paramViews(r.Params)})
		}
		v.Systems = append(v.Systems, sv)
	}
	p := h.Page(c, title("systems", nil))
	return kit.Render(c, http.StatusOK, views.Systems(p, v))
}

func paramViews(params []adapter.Param) []views.ParamView {
	out := make([]views.ParamView, 0, len(params))
	for _, p := range params {
		out = append(out, views.ParamView{Name: p.Name, Type: p.Type, Required: p.Required, Description: p.Description, Enum: p.Enum})
		for _, sub := range p.Properties {
			out = append(out, views.ParamView{Name: p.Name + "." + sub.Name, Type: sub.Type, Required: sub.Required,
				Description: sub.Description, Enum: sub.Enum})
		}
	}
	return out
}
