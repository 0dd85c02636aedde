package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/controlplane"
	"countersign/web/kit"
)

// taskJSON is a task as the API shows it.
type taskJSON struct {
	ID             string    `json:"id"`
	CustomerRef    string    `json:"customer_ref"`
	ConversationID string    `json:"conversation_id"`
	State          string    `json:"state"`
	Version        int32     `json:"version"`
	AllowedActions []string  `json:"allowed_actions"`
	Systems        []string  `json:"systems"`
	WriteBudget    int       `json:"write_budget"`
	WritesUsed     int       `json:"writes_used"`
	BudgetLeft     int       `json:"budget_left"`
	InflightLimit  int       `json:"inflight_limit"`
	RatePerMinute  int       `json:"rate_per_minute"`
	ExpiresAt      time.Time `json:"expires_at"`
	CreatedAt      time.Time `json:"created_at"`
	// Invocations and InvocationsByState are filled by GET /tasks/{id}.
	Invocations        []invocationJSON `json:"invocations,omitempty"`
	InvocationsByState map[string]int   `json:"invocations_by_state,omitempty"`
}

func taskOut(t controlplane.Task) taskJSON {
	return taskJSON{ID: t.ID, CustomerRef: t.CustomerRef, ConversationID: t.ConversationID, State: string(t.State),
		Version: t.Version, AllowedActions: nonNilStrings(t.AllowedActions), Systems: nonNilStrings(t.Systems),
		WriteBudget: t.WriteBudget, WritesUsed: t.WritesUsed, BudgetLeft: t.BudgetLeft(), InflightLimit: t.InflightLimit,
		RatePerMinute: t.RatePerMinute, ExpiresAt: t.ExpiresAt, CreatedAt: t.CreatedAt}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// newTaskRequest is the body of POST /api/v1/tasks. Omitted limits take
// the defaults in docs/api.md, lowered to the assistant's maxima.
type newTaskRequest struct {
	CustomerRef    string     `json:"customer_ref"`
	ConversationID string     `json:"conversation_id"`
	AllowedActions []string   `json:"allowed_actions"`
	Systems        []string   `json:"systems"`
	WriteBudget    *int       `json:"write_budget"`
	InflightLimit  *int       `json:"inflight_limit"`
	RatePerMinute  *int       `json:"rate_per_minute"`
	ExpiresAt      *time.Time `json:"expires_at"`
	// CustomerAssertion is the business's site vouching for the customer;
	// required unless an admin let the assistant act for any customer.
	CustomerAssertion string `json:"customer_assertion"`
}

// Limits of a new task's fields: past one, the call is a 422 naming the
// field and the limit.
const (
	// maxCustomerRefLen is the longest e-mail address (RFC 5321).
	maxCustomerRefLen    = 254
	maxConversationIDLen = 200
	maxAllowedActions    = 50
	// maxActionNameLen bounds an action's name, or "system/action".
	maxActionNameLen = 100
	maxTaskSystems   = 20
	maxSystemNameLen = 100
	// maxAssertionLen bounds a signed customer assertion.
	maxAssertionLen = 2000
)

func (r newTaskRequest) OverLimits() kit.FieldLimits {
	l := kit.FieldLimits{}
	l.Text("customer_ref", r.CustomerRef, maxCustomerRefLen)
	l.Text("conversation_id", r.ConversationID, maxConversationIDLen)
	l.List("allowed_actions", r.AllowedActions, maxAllowedActions, maxActionNameLen)
	l.List("systems", r.Systems, maxTaskSystems, maxSystemNameLen)
	l.Text("customer_assertion", r.CustomerAssertion, maxAssertionLen)
	return l
}

// handleAPITaskCreate answers POST /api/v1/tasks: opens a task for the
// calling assistant, within its maxima, for a customer the business
// vouched for. Every allowed action must be one the assistant has turned
// on.
func (h *Handler) handleAPITaskCreate(c echo.Context) error {
	var req newTaskRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	t, err := h.createTask(c.Request().Context(), currentAssistant(c), req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, taskOut(t))
}

// createTask opens a task for the assistant, from the API or MCP's
// open_task. Every allowed action must be one the assistant has turned on.
func (h *Handler) createTask(ctx context.Context, a assistants.Assistant, req newTaskRequest) (controlplane.Task, error) {
	for _, name := range req.AllowedActions {
		// Read tools work in every task; naming one is accepted and changes
		// nothing (the control plane still wants at least one write).
		if h.cfg.Registry.OffersReadTool(name) && !h.cfg.Registry.OffersAction(name) {
			continue
		}
		if !enabledFor(a, name) {
			return controlplane.Task{}, apperr.InvalidFields(map[string]string{"allowed_actions": fmt.Sprintf("%q is not enabled for this assistant", name)})
		}
	}
	return h.cfg.Assistants.OpenTask(ctx, a, assistants.TaskRequest{CustomerRef: req.CustomerRef,
		ConversationID: req.ConversationID, Systems: req.Systems, AllowedActions: req.AllowedActions,
		WriteBudget: req.WriteBudget, InflightLimit: req.InflightLimit, RatePerMinute: req.RatePerMinute,
		ExpiresAt: req.ExpiresAt, CustomerAssertion: req.CustomerAssertion})
}

// enabledFor reports whether an allowed-actions entry ("action" or
// "system/action") names an action the assistant has turned on.
func enabledFor(a assistants.Assistant, name string) bool {
	if _, _, qualified := adapter.ParseActionName(name); qualified {
		return a.Enabled[name]
	}
	for k := range a.Enabled {
		if _, action, _ := adapter.ParseActionName(k); action == name {
			return true
		}
	}
	return false
}

// handleAPITask answers GET /api/v1/tasks/:id: the task with its budget
// left and its invocations, newest last, counted by state.
func (h *Handler) handleAPITask(c echo.Context) error {
	ctx := c.Request().Context()
	t, err := h.cfg.Assistants.Task(ctx, currentAssistant(c), c.Param("id"))
	if err != nil {
		return err
	}
	invs, err := h.cfg.Control.Invocations(ctx, t.ID)
	if err != nil {
		return err
	}
	out := taskOut(t)
	out.Invocations = []invocationJSON{}
	out.InvocationsByState = map[string]int{}
	for _, inv := range invs {
		out.Invocations = append(out.Invocations, h.invocationOut(ctx, baseURL(c), inv))
		out.InvocationsByState[string(inv.State)]++
	}
	return c.JSON(http.StatusOK, out)
}

// versionRequest is the body of the task state changes.
type versionRequest struct {
	ExpectedVersion int32 `json:"expected_version"`
}

// handleAPITaskPause answers POST /api/v1/tasks/:id/pause: no permit is
// granted after it commits.
func (h *Handler) handleAPITaskPause(c echo.Context) error {
	return h.changeAPITask(c, controlplane.TaskPause)
}

// handleAPITaskResume answers POST /api/v1/tasks/:id/resume.
func (h *Handler) handleAPITaskResume(c echo.Context) error {
	return h.changeAPITask(c, controlplane.TaskResume)
}

// handleAPITaskCancel answers POST /api/v1/tasks/:id/cancel.
func (h *Handler) handleAPITaskCancel(c echo.Context) error {
	return h.changeAPITask(c, controlplane.TaskCancel)
}

func (h *Handler) changeAPITask(c echo.Context, verb controlplane.TaskVerb) error {
	var req versionRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	a := currentAssistant(c)
	t, err := h.cfg.Assistants.Task(c.Request().Context(), a, c.Param("id"))
	if err != nil {
		return err
	}
	if req.ExpectedVersion <= 0 {
		return apperr.InvalidFields(map[string]string{"expected_version": "required: the task's version as you last read it"})
	}
	t, err = h.cfg.Control.ChangeTask(c.Request().Context(), a.Actor(), t.ID, verb, req.ExpectedVersion)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, taskOut(t))
}
