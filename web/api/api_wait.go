package api

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/assistants"
	"countersign/internal/controlplane"
)

// waitHeader says, on an answer to ?wait=, why the wait ended: "changed"
// (the invocation left the state waited on), "final" (it is terminal:
// nothing more will happen) or "timeout" (nothing changed: the time ran
// out, or the console began shutting down).
const waitHeader = "Countersign-Wait"

// waitFix is the fix named in the field of a bad ?wait=.
var waitFix = "a duration from 0 to " + strconv.Itoa(int(controlplane.MaxWait.Seconds())) +
	" seconds, e.g. wait=20s, wait=1500ms or wait=20 (seconds)"

// parseWait reads ?wait=: empty is no wait, a whole number counts seconds,
// anything else is a Go duration ("20s", "1500ms"); more than
// controlplane.MaxWait or less than zero is a 400 naming the field.
func parseWait(raw string) (time.Duration, error) {
	if raw == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(raw)
	if n, nerr := strconv.Atoi(raw); nerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil || d < 0 || d > controlplane.MaxWait || strings.ContainsAny(raw, " +") {
		return 0, badRequest("invalid_parameter", "The wait parameter is not a wait this call takes.", map[string]string{"wait": waitFix})
	}
	return d, nil
}

// checkWaitState refuses a ?state= that names no state of an invocation.
func checkWaitState(raw string) error {
	if raw == "" || slices.Contains(controlplane.States, controlplane.State(raw)) {
		return nil
	}
	names := make([]string, len(controlplane.States))
	for i, s := range controlplane.States {
		names[i] = string(s)
	}
	return badRequest("invalid_parameter", "The state parameter is not a state of an invocation.",
		map[string]string{"state": "one of " + strings.Join(names, ", ") + ": the state you last saw"})
}

// awaitInvocation is the read of GET /invocations/{id} and of the MCP tools
// that read one: the invocation of the assistant's own task (another's is a
// 404, before any wait), then, when wait is more than zero, the invocation
// once it left the state from (its state now when from is empty) or is
// terminal, or when wait ran out. The outcome is empty without a wait.
func (h *Handler) awaitInvocation(ctx context.Context, a assistants.Assistant, id string, wait time.Duration, from string) (controlplane.Invocation, controlplane.WaitOutcome, error) {
	if err := checkWaitState(from); err != nil {
		return controlplane.Invocation{}, "", err
	}
	inv, _, err := h.cfg.Assistants.Invocation(ctx, a, id)
	if err != nil || wait <= 0 {
		return inv, "", err
	}
	state := controlplane.State(from)
	if state == "" {
		state = inv.State
	}
	return h.cfg.Control.AwaitChange(ctx, inv.ID, state, wait)
}

// handleAPIInvocation answers GET /api/v1/invocations/:id, waiting with
// ?wait= (and ?state=) for the invocation to change.
func (h *Handler) handleAPIInvocation(c echo.Context) error {
	wait, err := parseWait(c.QueryParam("wait"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	inv, outcome, err := h.awaitInvocation(ctx, currentAssistant(c), c.Param("id"), wait, c.QueryParam("state"))
	if err != nil {
		return err
	}
	if outcome != "" {
		c.Response().Header().Set(waitHeader, string(outcome))
	}
	return c.JSON(http.StatusOK, h.invocationOut(ctx, baseURL(c), inv))
}

// waitParams are the query parameters of GET /invocations/{id}.
var waitParams = []any{
	map[string]any{"name": "wait", "in": "query", "description": "Wait up to this long for the invocation to change before answering: " + waitFix +
		". Omitted or 0 answers at once. A bad value is a 400 invalid_parameter naming wait.",
		"schema": map[string]any{"type": "string", "maxLength": 16, "examples": []any{"20s", "20"}}},
	map[string]any{"name": "state", "in": "query", "description": "With wait: the state you last saw; the answer comes as soon as the invocation is in another one " +
		"(at once if it already is). Omitted: its state when the request arrives.",
		"schema": map[string]any{"type": "string", "enum": stateNames()}},
}

// waitHeaders are the response headers of GET /invocations/{id}.
var waitHeaders = map[string]any{waitHeader: map[string]any{
	"description": "Sent with wait: why the answer came: changed (it left the state waited on), final (it is terminal, nothing more will happen), timeout (nothing changed: the wait ran out, or the console began shutting down).",
	"schema":      map[string]any{"type": "string", "enum": []any{string(controlplane.WaitChanged), string(controlplane.WaitFinal), string(controlplane.WaitTimeout)}}}}

// stateNames are the invocation states, for a schema's enum.
func stateNames() []any {
	out := make([]any, len(controlplane.States))
	for i, s := range controlplane.States {
		out[i] = string(s)
	}
	return out
}
