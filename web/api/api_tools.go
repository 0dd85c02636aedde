package api

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/web/kit"
)

// toolsAnswer is the body of GET /api/v1/tools.
type toolsAnswer struct {
	Tools []assistants.Tool `json:"tools"`
}

// handleAPITools answers GET /api/v1/tools?task=&q=: the catalog of the
// calling assistant after the three filters (connected, turned on by the
// assistant, left on by the action's policy), narrowed to the task's
// systems and actions when task is given.
func (h *Handler) handleAPITools(c echo.Context) error {
	a := currentAssistant(c)
	var task *controlplane.Task
	if id := c.QueryParam("task"); id != "" {
		t, err := h.cfg.Assistants.Task(c.Request().Context(), a, id)
		if err != nil {
			return err
		}
		task = &t
	}
	tools, err := h.cfg.Assistants.Catalog(c.Request().Context(), a, task, c.QueryParam("q"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toolsAnswer{Tools: tools})
}

// readToolRequest is the body of POST /api/v1/tools/{name}.
type readToolRequest struct {
	// Task names the task whose customer the read is for; it may also be
	// given as ?task=.
	Task   string          `json:"task"`
	System string          `json:"system"`
	Args   json.RawMessage `json:"args"`
}

// maxTaskIDLen bounds a task id given in a body or query.
const maxTaskIDLen = 100

func (r readToolRequest) OverLimits() kit.FieldLimits {
	l := kit.FieldLimits{}
	l.Text("task", r.Task, maxTaskIDLen)
	l.Text("system", r.System, maxSystemNameLen)
	l.JSON("args", r.Args, maxArgsBytes)
	return l
}

// handleAPIToolCall answers POST /api/v1/tools/:name: runs a read tool for
// the task's customer and returns {data, count, truncated}.
func (h *Handler) handleAPIToolCall(c echo.Context) error {
	var req readToolRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.Task == "" {
		req.Task = c.QueryParam("task")
	}
	if req.Task == "" {
		return apperr.InvalidFields(map[string]string{"task": "required: the task whose customer this read is for"})
	}
	task, err := h.cfg.Assistants.Task(c.Request().Context(), currentAssistant(c), req.Task)
	if err != nil {
		return err
	}
	res, err := h.cfg.Assistants.Read(c.Request().Context(), task, req.System, c.Param("name"), req.Args)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
